import { readCertificatePair } from '../platform/certificate-files';
import { isLoopbackHost } from '../platform/loopback-host';

/**
 * How a push endpoint serves: `off` (plain HTTP), `self-signed` (TLS with a certificate the worker
 * makes at start and keeps in memory; its SHA-256 pin travels with the URL, through Temporal, and
 * clients accept that certificate only), or a given certificate and key (PEM, or the files holding
 * them, read again within a second of a change), which clients accept when a CA they trust vouches
 * for it and its name matches the URL's host.
 */
export type LiveEndpointTls =
  | 'off'
  | 'self-signed'
  | {
      /** The certificate (with its chain), PEM. */
      cert: string | Buffer;
      /** Its private key, PEM. */
      key: string | Buffer;
    }
  | {
      /** The file holding the certificate (with its chain), PEM. */
      certFile: string;
      /** The file holding its private key, PEM. */
      keyFile: string;
    };

/** Where a worker's push endpoint listens, the URL other processes reach it at, and its TLS; undefined when off. */
export interface LiveEndpointSettings {
  /** The address it listens on. */
  host: string;
  /** The port it listens on; 0 for any free one. */
  port: number;
  /** The URL other processes reach it at, when not `http(s)://host:port`. */
  advertisedUrl?: string;
  /**
   * Default: `off` when it listens on loopback only (one machine: nothing crosses a network, and
   * plain saves a handshake per watcher), else `self-signed`.
   */
  tls?: LiveEndpointTls;
}

/** The TLS an endpoint serves with: the one asked for, else the default for where it listens. */
export function liveTlsOf(settings: Pick<LiveEndpointSettings, 'host' | 'tls'>): LiveEndpointTls {
  return settings.tls ?? (isLoopbackHost(settings.host) ? 'off' : 'self-signed');
}

/**
 * AGENT_LIVE_ENDPOINT: `host:port` to listen on (default `127.0.0.1:0`, a free loopback port: watchers
 * and workers on this machine), or `off`. AGENT_LIVE_URL: the URL others reach it at, needed when it
 * listens on all interfaces for workers and watchers on other machines (`https://worker-3:7290`).
 * AGENT_LIVE_TLS: `auto` (default: plain on loopback, TLS with a self-signed certificate beyond it),
 * `on` or `off`; AGENT_LIVE_TLS_CERT and AGENT_LIVE_TLS_KEY (PEM files) give it a certificate.
 * Throws on a malformed value, or files that are not a certificate and its key.
 */
export function liveEndpointFromEnv(env: NodeJS.ProcessEnv): LiveEndpointSettings | undefined {
  const listen = (env.AGENT_LIVE_ENDPOINT ?? '').trim() || '127.0.0.1:0';
  if (listen === 'off') return undefined;
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(listen);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) {
    throw new Error(
      `AGENT_LIVE_ENDPOINT must be host:port (such as 0.0.0.0:7290) or off, not ${JSON.stringify(listen)}`,
    );
  }
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const advertised = (env.AGENT_LIVE_URL ?? '').trim();
  if (advertised && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(advertised)) {
    throw new Error(
      `AGENT_LIVE_URL must be an http(s) URL such as https://worker-3:7290, not ${JSON.stringify(advertised)}`,
    );
  }
  if (!advertised && (host === '0.0.0.0' || host === '::')) {
    throw new Error(
      `AGENT_LIVE_ENDPOINT listens on all interfaces (${listen}): set AGENT_LIVE_URL to the URL others reach it at`,
    );
  }
  const tls = liveTlsFromEnv(env);
  return { host, port, ...(advertised ? { advertisedUrl: advertised } : {}), ...(tls ? { tls } : {}) };
}

function liveTlsFromEnv(env: NodeJS.ProcessEnv): LiveEndpointTls | undefined {
  const mode = (env.AGENT_LIVE_TLS ?? '').trim() || 'auto';
  if (mode !== 'auto' && mode !== 'on' && mode !== 'off')
    throw new Error(`AGENT_LIVE_TLS must be auto, on or off, not ${JSON.stringify(mode)}`);
  const certFile = (env.AGENT_LIVE_TLS_CERT ?? '').trim();
  const keyFile = (env.AGENT_LIVE_TLS_KEY ?? '').trim();
  if (!certFile !== !keyFile) throw new Error('AGENT_LIVE_TLS_CERT and AGENT_LIVE_TLS_KEY are set together');
  if (!certFile) return mode === 'on' ? 'self-signed' : mode === 'off' ? 'off' : undefined;
  if (mode === 'off')
    throw new Error('AGENT_LIVE_TLS=off, yet AGENT_LIVE_TLS_CERT gives a certificate to serve');
  try {
    readCertificatePair(certFile, keyFile);
  } catch (error) {
    throw new Error(`AGENT_LIVE_TLS_CERT, AGENT_LIVE_TLS_KEY: ${(error as Error).message}`);
  }
  return { certFile, keyFile };
}
