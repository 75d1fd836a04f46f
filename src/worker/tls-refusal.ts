import net from 'node:net';
import tls from 'node:tls';
import type { TLSConfig } from '@temporalio/client';

/** How long the probe's handshake may take. */
const HANDSHAKE_MS = 3_000;
/** How long a refusal is awaited after the handshake: with TLS 1.3 the server checks the client's certificate last. */
const LATE_ALERT_MS = 1_000;
/** Errors that mean nothing listens, or not yet: the caller's own error says that better. */
const NOT_ANSWERING = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
]);

/**
 * Why the server at `address` refuses a TLS connection made with `config`, found by a handshake of
 * our own: gRPC reports a refused handshake only as a connection that closed, or never became
 * ready before its deadline. Undefined when nothing answers or the handshake holds.
 */
export function tlsRefusal(address: string, config: TLSConfig): Promise<string | undefined> {
  const { host, port } = hostAndPort(address);
  return new Promise((resolve) => {
    const socket = tls.connect({
      host,
      port,
      ...(config.serverNameOverride || !net.isIP(host)
        ? { servername: config.serverNameOverride ?? host }
        : {}),
      ...(config.serverRootCACertificate ? { ca: Buffer.from(config.serverRootCACertificate) } : {}),
      ...(config.clientCertPair
        ? { cert: Buffer.from(config.clientCertPair.crt), key: Buffer.from(config.clientCertPair.key) }
        : {}),
      ALPNProtocols: ['h2'],
    });
    let timer = setTimeout(() => done(undefined), HANDSHAKE_MS);
    function done(reason: string | undefined): void {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    }
    socket.on('error', (error: NodeJS.ErrnoException) =>
      done(NOT_ANSWERING.has(error.code ?? '') ? undefined : explained(error.message)),
    );
    socket.on('secureConnect', () => {
      clearTimeout(timer);
      timer = setTimeout(() => done(undefined), LATE_ALERT_MS);
    });
    // Read, so that an alert sent after the handshake arrives as an error.
    socket.on('data', () => undefined);
    socket.on('close', () => done(undefined));
  });
}

function explained(message: string): string {
  if (/alert certificate required/i.test(message)) {
    return 'it requires a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH, or client_cert_path and client_key_path in the profile)';
  }
  if (/alert (bad certificate|unknown ca|certificate unknown)/i.test(message)) {
    return `it does not accept the client certificate (${message})`;
  }
  return message;
}

function hostAndPort(address: string): { host: string; port: number } {
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  return match ? { host: match[1]!, port: Number(match[2]) } : { host: address, port: 7233 };
}
