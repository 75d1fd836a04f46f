import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { LiveModelCalls } from '../activities/live-model-calls';
import type { LocalCancelRequests } from '../activities/local-cancel-requests';
import { certificatePin } from '../client/live-endpoint-request';
import { followCertificateFiles, readCertificatePair } from '../platform/certificate-files';
import { type LiveEndpointSettings, type LiveEndpointTls, liveTlsOf } from './live-endpoint-settings';

export interface LiveEndpointOptions extends LiveEndpointSettings {
  calls: LiveModelCalls;
  cancels: LocalCancelRequests;
}

export interface LiveEndpoint {
  /** The base URL advertised (in the worker's identity and in model calls' heartbeat details). */
  url: string;
  /** The pin of the certificate it made itself, advertised beside the URL; absent otherwise. */
  pin?: string;
  close(): Promise<void>;
}

const TOKEN = /^\/model-text\/([A-Za-z0-9_-]{16,64})$/;
const CANCEL = /^\/cancel-requested\/([A-Za-z0-9-]{1,64})$/;

/**
 * A worker's push channel, for what a heartbeat would bring a second later:
 * - `GET /model-text/TOKEN`: a running model call's text as server-sent events (the text so far,
 *   then each piece as it arrives, then `end`), for watchers in other processes. The token is the
 *   capability, and only the call's heartbeat details name it.
 * - `POST /cancel-requested/RUN_ID`: the workflow of that run has just asked for some activities to
 *   stop; this worker's activities of the run then ask the server, which alone decides, until it has
 *   recorded the request. Anyone may knock: a knock stops nothing by itself.
 * Degrades to nothing: watchers and activities still hear everything through heartbeats.
 * Served over TLS (see `LiveEndpointTls`) unless it listens on loopback only or is told otherwise.
 */
export async function startLiveEndpoint(options: LiveEndpointOptions): Promise<LiveEndpoint> {
  const tls = liveTlsOf(options);
  const advertisedScheme = options.advertisedUrl && new URL(options.advertisedUrl).protocol;
  if (tls !== 'off' && advertisedScheme === 'http:')
    throw new Error(
      `the push endpoint serves TLS, so the URL others reach it at is https, not ${options.advertisedUrl} (or set AGENT_LIVE_TLS=off to serve plain HTTP)`,
    );
  const credentials = await credentialsFor(tls);
  const handler: http.RequestListener = (request, response) => {
    const path = (request.url ?? '').split('?')[0]!;
    const cancel = CANCEL.exec(path);
    if (request.method === 'POST' && cancel) {
      request.resume();
      options.cancels.requested(cancel[1]!);
      response.writeHead(204).end();
      return;
    }
    const token = TOKEN.exec(path);
    if (request.method === 'GET' && token && options.calls.has(token[1]!)) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      response.flushHeaders();
      const stop = options.calls.follow(token[1]!, (delta) => {
        if (delta === 'end') response.end('event: end\ndata: {}\n\n');
        else response.write(`data: ${JSON.stringify(delta)}\n\n`);
      });
      request.on('close', () => stop?.());
      return;
    }
    response.writeHead(404).end();
  };
  const server = credentials ? https.createServer(credentials, handler) : http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = (options.advertisedUrl ?? `${credentials ? 'https' : 'http'}://${host}:${port}`).replace(
    /\/+$/,
    '',
  );
  const pin =
    tls === 'self-signed' && credentials
      ? certificatePin(new X509Certificate(credentials.cert).raw)
      : undefined;
  options.calls.baseUrl = url;
  options.calls.pin = pin;
  // A certificate renewed in its files is served from the next handshake on.
  const stopFollowing =
    typeof tls === 'object' && 'certFile' in tls
      ? followCertificateFiles(
          tls.certFile,
          tls.keyFile,
          (pair) => (server as https.Server).setSecureContext(pair),
          (line) => process.emitWarning(`push endpoint: ${line}`, 'LiveEndpointCertificate'),
        )
      : undefined;
  return {
    url,
    ...(pin ? { pin } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        stopFollowing?.();
        if (options.calls.baseUrl === url) {
          options.calls.baseUrl = undefined;
          options.calls.pin = undefined;
        }
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The certificate and key to serve with; none for plain HTTP. */
async function credentialsFor(
  tls: LiveEndpointTls,
): Promise<{ cert: string | Buffer; key: string | Buffer } | undefined> {
  if (tls === 'off') return undefined;
  if (typeof tls === 'object')
    return 'certFile' in tls ? readCertificatePair(tls.certFile, tls.keyFile) : tls;
  const { selfSignedCertificate } = await import('./self-signed-certificate');
  return selfSignedCertificate('durable-agent push endpoint');
}
