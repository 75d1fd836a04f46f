import { readFileSync, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';

/** A certificate (with its chain) and its private key, PEM, as read from their files. */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
}

/** Reads a certificate and key pair; throws, naming the file, when either cannot be read or they do not match. */
export function readCertificatePair(certFile: string, keyFile: string): CertificatePair {
  const read = (file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const pair = { cert: read(certFile), key: read(keyFile) };
  try {
    // Parses both and checks that the key is the certificate's.
    createSecureContext(pair);
  } catch (error) {
    throw new Error(
      `${certFile} and ${keyFile} are not a certificate and its key: ${(error as Error).message}`,
    );
  }
  return pair;
}

/** How often the files are looked at: a renewed certificate is served within this long. */
export const CERTIFICATE_LOOK_MS = 1_000;

/**
 * Looks at the certificate and key files every `everyMs` and, once both have changed into a pair
 * that reads and matches, hands it to `use` (a TLS server's `setSecureContext`): a certificate
 * renewed on disk (cert-manager, certbot) is served without a restart. A pair caught half written,
 * or that does not match, keeps the one served before and is told to `warn`, once. Returns the stop.
 */
export function followCertificateFiles(
  certFile: string,
  keyFile: string,
  use: (pair: CertificatePair) => void,
  warn: (line: string) => void,
  everyMs = CERTIFICATE_LOOK_MS,
): () => void {
  const stampNow = () => `${stampOf(certFile)}|${stampOf(keyFile)}`;
  let served = stampNow();
  let refused: string | undefined;
  const timer = setInterval(() => {
    const stamp = stampNow();
    if (stamp === served || stamp === refused) return;
    try {
      use(readCertificatePair(certFile, keyFile));
      served = stamp;
    } catch (error) {
      refused = stamp;
      warn(`the certificate served before stays: ${(error as Error).message}`);
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

function stampOf(path: string): string {
  try {
    const { mtimeMs, size, ino } = statSync(path);
    return `${mtimeMs}:${size}:${ino}`;
  } catch {
    return 'unreadable';
  }
}
