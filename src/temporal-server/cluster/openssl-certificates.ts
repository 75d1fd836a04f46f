import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '../../tools/exec/child-environment';

// Certificates made with the `openssl` program (1.1.1 or later): a CA, and leaves it signs. Keys are
// ECDSA P-256, which Temporal's Go server and the SDK's Rust core both accept; key files are
// readable by their owner only. Each call writes its own configuration file, so the system's
// openssl.cnf adds nothing.

export const OPENSSL_MISSING =
  'cluster start --tls makes its certificates with the openssl program, which is not on PATH: install it (apt-get install openssl)';

/** A certificate and its private key, PEM files. */
export interface CertificateFiles {
  cert: string;
  key: string;
}

export interface LeafRequest {
  /** The subject's common name. */
  commonName: string;
  /** DNS names and IP addresses it is valid for (a server's); none for a client's. */
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  /** What it may be used for: a server's TLS, a client's, or both (Temporal's internode certificate). */
  usages: readonly ('serverAuth' | 'clientAuth')[];
  days: number;
}

/** Whether the `openssl` program runs here. */
export function opensslAvailable(): boolean {
  const probe = spawnSync('openssl', ['version'], { env: childEnvironment(process.env), encoding: 'utf8' });
  return probe.status === 0;
}

/** A self-signed CA certificate for `days`. */
export function makeCertificateAuthority(files: CertificateFiles, commonName: string, days: number): void {
  makeKey(files.key);
  withConfig(
    [
      '[req]',
      'distinguished_name = subject',
      'prompt = no',
      '[subject]',
      `CN = ${commonName}`,
      '[extensions]',
      'basicConstraints = critical, CA:TRUE',
      'keyUsage = critical, keyCertSign, cRLSign',
      'subjectKeyIdentifier = hash',
    ],
    (config) =>
      openssl([
        'req',
        '-x509',
        '-new',
        '-key',
        files.key,
        '-sha256',
        '-days',
        String(days),
        '-set_serial',
        serial(),
        '-config',
        config,
        '-extensions',
        'extensions',
        '-out',
        files.cert,
      ]),
  );
}

/** A certificate signed by `ca` for `request`, with a new key. */
export function makeLeafCertificate(
  files: CertificateFiles,
  ca: CertificateFiles,
  request: LeafRequest,
): void {
  makeKey(files.key);
  const names = [
    ...(request.dnsNames ?? []).map((name) => `DNS:${name}`),
    ...(request.ipAddresses ?? []).map((address) => `IP:${address}`),
  ];
  withConfig(
    [
      '[req]',
      'distinguished_name = subject',
      'prompt = no',
      '[subject]',
      `CN = ${request.commonName}`,
      '[extensions]',
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature',
      `extendedKeyUsage = ${request.usages.join(', ')}`,
      'subjectKeyIdentifier = hash',
      'authorityKeyIdentifier = keyid',
      ...(names.length ? [`subjectAltName = ${names.join(', ')}`] : []),
    ],
    (config, scratch) => {
      const csr = path.join(scratch, 'request.csr');
      openssl(['req', '-new', '-key', files.key, '-config', config, '-out', csr]);
      openssl([
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        ca.cert,
        '-CAkey',
        ca.key,
        '-set_serial',
        serial(),
        '-sha256',
        '-days',
        String(request.days),
        '-extfile',
        config,
        '-extensions',
        'extensions',
        '-out',
        files.cert,
      ]);
    },
  );
}

/** Whether the certificate in `file` is still valid `seconds` from now. */
export function validFor(file: string, seconds: number): boolean {
  return (
    spawnSync('openssl', ['x509', '-checkend', String(seconds), '-noout', '-in', file], {
      env: childEnvironment(process.env),
    }).status === 0
  );
}

function makeKey(file: string): void {
  openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file]);
  chmodSync(file, 0o600);
}

/** A random positive serial number, as CAs must give (RFC 5280: unique, at most 20 bytes). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return `0x${bytes.toString('hex')}`;
}

function withConfig(lines: readonly string[], use: (config: string, scratch: string) => void): void {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-openssl-'));
  try {
    const config = path.join(scratch, 'openssl.cnf');
    writeFileSync(config, `${lines.join('\n')}\n`, { mode: 0o600 });
    use(config, scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function openssl(args: readonly string[]): void {
  const result = spawnSync('openssl', args, { env: childEnvironment(process.env), encoding: 'utf8' });
  if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new Error(OPENSSL_MISSING);
  if (result.status !== 0) {
    throw new Error(`openssl ${args[0]} failed: ${(result.stderr || result.error?.message || '').trim()}`);
  }
}
