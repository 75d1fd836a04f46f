import type { TLSConfig } from '@temporalio/client';
import { readSmallFile } from '../platform/small-file';
import type { ConnectionSettings, PemSource } from '../shared/connection-settings';

/** Certificates and keys are a few KiB; a chain of ten is still far below this. */
const MAX_PEM_BYTES = 256 * 1024;

/** What `Connection.connect` and `NativeConnection.connect` take from the settings, besides the address. */
export interface TemporalConnectionOptions {
  /** TLS to the frontend, its certificates read; false for plain gRPC. */
  tls: TLSConfig | false;
  /** The API key sent with every call. */
  apiKey?: string;
  /** gRPC headers sent with every call. */
  metadata?: Record<string, string>;
}

/**
 * The TLS, API key and gRPC headers of `settings`, certificates read now. TLS is on when the
 * settings carry TLS settings not disabled, or an API key (as Temporal's client configuration has
 * it); a client certificate without its key, or a key without its certificate, is refused here
 * rather than sent without either, which the server would refuse with less to go on.
 */
export function temporalConnectionOptions(settings: ConnectionSettings): TemporalConnectionOptions {
  const { tls, apiKey, grpcMeta } = settings;
  const extra = { ...(apiKey ? { apiKey } : {}), ...(grpcMeta ? { metadata: grpcMeta } : {}) };
  if (tls?.disabled || (!tls && !apiKey)) return { tls: false, ...extra };
  if (!tls) return { tls: {}, ...extra };
  if (Boolean(tls.clientCert) !== Boolean(tls.clientKey)) {
    throw new Error(
      tls.clientCert
        ? `the TLS client certificate needs its key (TEMPORAL_TLS_CLIENT_KEY_PATH, or client_key_path in the profile); ${settings.source} has none`
        : `the TLS client key needs its certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, or client_cert_path in the profile); ${settings.source} has none`,
    );
  }
  const clientCert = pem(tls.clientCert, 'TLS client certificate');
  const clientKey = pem(tls.clientKey, 'TLS client key');
  const serverCA = pem(tls.serverCACert, "CA for the server's certificate");
  return {
    tls: {
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
      ...(serverCA ? { serverRootCACertificate: serverCA } : {}),
      ...(clientCert && clientKey ? { clientCertPair: { crt: clientCert, key: clientKey } } : {}),
    },
    ...extra,
  };
}

function pem(source: PemSource | undefined, what: string): Uint8Array | undefined {
  if (!source) return undefined;
  if ('data' in source) return typeof source.data === 'string' ? Buffer.from(source.data) : source.data;
  return readSmallFile(source.path, MAX_PEM_BYTES, `the ${what}`);
}
