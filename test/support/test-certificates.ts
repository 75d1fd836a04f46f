import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

type Keys = x509.X509CertificateCreateSelfSignedParams['keys'];
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export interface TestCertificates {
  /** The CA's certificate, PEM: what a client that trusts the server is given. */
  ca: string;
  /** The server's certificate for its addresses and localhost, signed by the CA, and its key (PEM). */
  cert: string;
  key: string;
}

async function keyPair(): Promise<Keys> {
  return (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as unknown as Keys;
}

/**
 * A CA made for one test and a server certificate it signed, as an operator's PKI would give them:
 * for localhost and `ipAddresses` (default 127.0.0.1).
 */
export async function testCertificates(
  ipAddresses: readonly string[] = ['127.0.0.1'],
): Promise<TestCertificates> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const caKeys = await keyPair();
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=durable-agent test CA',
    keys: caKeys,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const serverKeys = await keyPair();
  const server = await x509.X509CertificateGenerator.create({
    subject: 'CN=localhost',
    issuer: ca.subject,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.SubjectAlternativeNameExtension([
        ...ipAddresses.map((value) => ({ type: 'ip' as const, value })),
        { type: 'dns', value: 'localhost' },
      ]),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', serverKeys.privateKey as never));
  const key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({
    type: 'pkcs8',
    format: 'pem',
  });
  return { ca: ca.toString('pem'), cert: server.toString('pem'), key: key.toString() };
}
