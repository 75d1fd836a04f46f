import { createHash } from 'node:crypto';
import { once } from 'node:events';
import http, { type IncomingMessage } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';

/**
 * A worker's push endpoint as its heartbeats and identity name it: the URL, and for an endpoint
 * serving the certificate it made itself, that certificate's pin.
 */
export interface LiveEndpointAddress {
  url: string;
  /** `certificatePin` of the one certificate to accept; absent for plain HTTP or a certificate a CA vouches for. */
  pin?: string;
}

/** A certificate's pin: the SHA-256 of its DER bytes, in lowercase hex. */
export function certificatePin(der: Buffer): string {
  return createHash('sha256').update(der).digest('hex');
}

export const PIN_PATTERN = /^[0-9a-f]{64}$/;

/** A push endpoint that is not who its worker said: nothing was sent to it. */
export class LiveEndpointTrustError extends Error {
  override readonly name = 'LiveEndpointTrustError';
}

export interface LiveRequestOptions {
  method: 'GET' | 'POST';
  signal: AbortSignal;
  /**
   * Whom to trust for an https URL without a pin, in place of Node's store (the system's CAs and
   * NODE_EXTRA_CA_CERTS).
   */
  ca?: string | Buffer;
}

/**
 * Sends one bodiless request to a push endpoint and resolves with its response. Over https, the
 * TLS handshake is checked before a byte of the request (its path carries a capability) is sent:
 * with a pin, the server must present exactly that certificate (it signed it itself, so no CA
 * vouches for it); without one, a CA must vouch for it and its name must match the URL's host.
 */
export async function requestLiveEndpoint(
  address: LiveEndpointAddress,
  options: LiveRequestOptions,
): Promise<IncomingMessage> {
  const target = new URL(address.url);
  const socket = await connectTrusted(target, address.pin, options);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        method: options.method,
        path: `${target.pathname}${target.search}`,
        headers: { host: target.host },
        createConnection: () => socket,
        signal: options.signal,
      },
      resolve,
    );
    request.once('error', (error) => {
      socket.destroy();
      reject(error);
    });
    request.end();
  });
}

async function connectTrusted(
  target: URL,
  pin: string | undefined,
  { signal, ca }: LiveRequestOptions,
): Promise<net.Socket> {
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:')
    throw new LiveEndpointTrustError(`not an http(s) URL: ${target.protocol}`);
  // A pin promises TLS: a plain URL beside one was not written by the worker.
  if (pin !== undefined && (!secure || !PIN_PATTERN.test(pin)))
    throw new LiveEndpointTrustError('a pinned push endpoint is reached over https only, by a SHA-256 pin');
  const port = Number(target.port || (secure ? 443 : 80));
  const socket = secure
    ? tls.connect({
        host,
        port,
        ...(net.isIP(host) ? {} : { servername: host }),
        // With a pin, the chain is not asked about: the pin below names the one certificate to accept.
        rejectUnauthorized: pin === undefined,
        ...(ca !== undefined ? { ca } : {}),
        ALPNProtocols: ['http/1.1'],
      })
    : net.connect({ host, port });
  try {
    await once(socket, secure ? 'secureConnect' : 'connect', { signal });
  } catch (error) {
    socket.destroy();
    // Set only when the handshake went through and the certificate did not pass.
    const refused = secure ? (socket as tls.TLSSocket).authorizationError : undefined;
    if (refused)
      throw new LiveEndpointTrustError(
        `the push endpoint at ${target.host} presented a certificate no trusted CA vouches for (${String(refused)})`,
      );
    throw error;
  }
  if (pin !== undefined) {
    const presented = (socket as tls.TLSSocket).getPeerX509Certificate();
    if (!presented || certificatePin(presented.raw) !== pin) {
      socket.destroy();
      throw new LiveEndpointTrustError(
        `the push endpoint at ${target.host} presented a certificate other than the one its worker advertised`,
      );
    }
  }
  return socket;
}
