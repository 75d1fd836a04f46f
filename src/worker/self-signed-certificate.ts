// @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect metadata API; this
// module is loaded only by a worker that makes its own certificate.
import 'reflect-metadata';
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** A certificate and its private key, PEM. */
export interface TlsCredentials {
  cert: string;
  key: string;
}

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;

/**
 * A certificate signed by its own new key (ECDSA P-256), held in memory only. Its clients pin it by
 * its SHA-256, so no CA vouches for it and its name and dates are not what they check; it is valid
 * from a day ago (clocks apart) for ten years, so that no tool that does look finds it expired.
 */
export async function selfSignedCertificate(commonName: string): Promise<TlsCredentials> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    // Positive and unique, as X.509 asks: a leading 01 byte, then random ones.
    serialNumber: `01${randomBytes(15).toString('hex')}`,
    name: new x509.Name([{ CN: [commonName] }]),
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + 3_650 * DAY_MS),
    keys: keys as unknown as x509.X509CertificateCreateSelfSignedParams['keys'],
    signingAlgorithm: ALGORITHM,
    extensions: [new x509.BasicConstraintsExtension(false, undefined, true)],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({
    type: 'pkcs8',
    format: 'pem',
  });
  return { cert: certificate.toString('pem'), key: key.toString() };
}
