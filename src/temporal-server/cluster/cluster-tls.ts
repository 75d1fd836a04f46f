import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clientConfigToToml } from '@temporalio/envconfig';
import { connectionSettingsFromEnv } from '../../client/connection-settings-from-env';
import {
  type TemporalConnectionOptions,
  temporalConnectionOptions,
} from '../../client/temporal-connection-options';
import {
  type CertificateFiles,
  OPENSSL_MISSING,
  makeCertificateAuthority,
  makeLeafCertificate,
  opensslAvailable,
  validFor,
} from './openssl-certificates';

/** The profile `cluster start --tls` writes, in `DIR/tls/temporal.toml`. */
export const CLUSTER_PROFILE = 'cluster';
/** The name the frontend's certificate is checked against; it is valid for 127.0.0.1 and ::1 too. */
export const CLUSTER_SERVER_NAME = 'localhost';
const CA_DAYS = 3650;
const LEAF_DAYS = 397;
/** A certificate with less left than this is made again when the cluster starts. */
const RENEW_WITHIN_S = 30 * 24 * 60 * 60;

/** A TLS cluster's certificates and its clients' profile, in `DIR/tls`. */
export interface ClusterTlsFiles {
  dir: string;
  ca: CertificateFiles;
  /** The frontend's and the internode certificate: server and client (the services call each other). */
  server: CertificateFiles;
  /** The clients' certificate, named by the profile. */
  client: CertificateFiles;
  /** `temporal.toml` with the profile CLUSTER_PROFILE. */
  profile: string;
}

export function clusterTlsFiles(clusterDir: string): ClusterTlsFiles {
  const dir = path.join(clusterDir, 'tls');
  const pair = (name: string) => ({
    cert: path.join(dir, `${name}.pem`),
    key: path.join(dir, `${name}.key`),
  });
  return {
    dir,
    ca: pair('ca'),
    server: pair('server'),
    client: pair('client'),
    profile: path.join(dir, 'temporal.toml'),
  };
}

/**
 * The cluster's CA, server and client certificates: made the first time, kept after (clients hold
 * the CA), a leaf made again when it is about to expire, all of them when the CA is.
 */
export async function ensureClusterCertificates(
  files: ClusterTlsFiles,
  log: (line: string) => void,
): Promise<void> {
  const current = (pair: CertificateFiles) =>
    existsSync(pair.cert) && existsSync(pair.key) && validFor(pair.cert, RENEW_WITHIN_S);
  const caCurrent = current(files.ca);
  if (caCurrent && current(files.server) && current(files.client)) return;
  if (!opensslAvailable()) throw new Error(OPENSSL_MISSING);
  await mkdir(files.dir, { recursive: true, mode: 0o700 });
  if (!caCurrent) {
    log(`Making the cluster's CA in ${files.dir}.`);
    makeCertificateAuthority(files.ca, 'durable-agent cluster CA', CA_DAYS);
  }
  if (!caCurrent || !current(files.server)) {
    makeLeafCertificate(files.server, files.ca, {
      commonName: 'durable-agent cluster frontend',
      dnsNames: [CLUSTER_SERVER_NAME],
      ipAddresses: ['127.0.0.1', '::1'],
      usages: ['serverAuth', 'clientAuth'],
      days: LEAF_DAYS,
    });
  }
  if (!caCurrent || !current(files.client)) {
    makeLeafCertificate(files.client, files.ca, {
      commonName: 'durable-agent client',
      usages: ['clientAuth'],
      days: LEAF_DAYS,
    });
  }
}

/**
 * What the server's configuration template reads to serve TLS: the frontend requires a client
 * certificate signed by the cluster's CA (mTLS), and the services speak mTLS among themselves
 * too, as the template ties the two (the worker service reaches the frontend with the internode
 * certificate).
 */
export function serverTlsEnvironment(files: ClusterTlsFiles): Record<string, string> {
  return {
    TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
    TEMPORAL_TLS_SERVER_CERT: files.server.cert,
    TEMPORAL_TLS_SERVER_KEY: files.server.key,
    TEMPORAL_TLS_SERVER_CA_CERT: files.ca.cert,
    TEMPORAL_TLS_INTERNODE_SERVER_NAME: CLUSTER_SERVER_NAME,
    TEMPORAL_TLS_FRONTEND_CERT: files.server.cert,
    TEMPORAL_TLS_FRONTEND_KEY: files.server.key,
    TEMPORAL_TLS_CLIENT1_CA_CERT: files.ca.cert,
    TEMPORAL_TLS_CLIENT2_CA_CERT: files.ca.cert,
    TEMPORAL_TLS_FRONTEND_SERVER_NAME: CLUSTER_SERVER_NAME,
  };
}

/** Writes the clients' profile: the frontend's address, the namespace, the CA, the server name, the client certificate. */
export async function writeClusterProfile(
  files: ClusterTlsFiles,
  address: string,
  namespace: string,
): Promise<void> {
  const toml = Buffer.from(
    clientConfigToToml({
      profiles: {
        [CLUSTER_PROFILE]: {
          address,
          namespace,
          tls: {
            serverName: CLUSTER_SERVER_NAME,
            serverCACert: { path: files.ca.cert },
            clientCert: { path: files.client.cert },
            clientKey: { path: files.client.key },
          },
        },
      },
    }),
  ).toString('utf8');
  const header = [
    '# Written by `durable-agent cluster start --tls` (again at each start): how clients reach this',
    "# cluster's frontend, which requires a client certificate signed by the cluster's CA. Use it with",
    `#   ${clusterProfileUsage(files)}`,
  ];
  await writeFile(files.profile, `${header.join('\n')}\n\n${toml}`, { mode: 0o600 });
}

/** The variables that point a worker or a command at the cluster through its profile. */
export function clusterProfileUsage(files: ClusterTlsFiles): string {
  return `TEMPORAL_CONFIG_FILE=${files.profile} TEMPORAL_PROFILE=${CLUSTER_PROFILE}`;
}

/**
 * The TLS of a start serving `address`: the certificates made when missing or about to expire,
 * the clients' profile written; what the services add to their environment, and how the cluster's
 * own checks connect.
 */
export async function prepareClusterTls(
  files: ClusterTlsFiles,
  address: string,
  namespace: string,
  log: (line: string) => void,
): Promise<{ environment: Record<string, string>; connection: TemporalConnectionOptions }> {
  await ensureClusterCertificates(files, log);
  await writeClusterProfile(files, address, namespace);
  return { environment: serverTlsEnvironment(files), connection: clusterConnectionOptions(files) };
}

/** How the cluster's own checks connect: through the profile it wrote, as its clients do. */
export function clusterConnectionOptions(files: ClusterTlsFiles): TemporalConnectionOptions {
  return temporalConnectionOptions(
    connectionSettingsFromEnv({ TEMPORAL_CONFIG_FILE: files.profile, TEMPORAL_PROFILE: CLUSTER_PROFILE }),
  );
}
