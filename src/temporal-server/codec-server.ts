import { BodyTooLargeError, readBoundedBody } from '../platform/bounded-body';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';

/** The largest request body taken: payloads of one history page, or one payload the UI encodes. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface CodecServerOptions {
  codec: PayloadCodec;
  host: string;
  port: number;
  /**
   * Browser origins allowed to call (the Web UI's). A request from any other origin is refused:
   * without that, any web page open in the operator's browser could have the codec read blobs
   * for it. Requests without an Origin (command-line tools) are served; keep the server on loopback.
   */
  allowedOrigins: readonly string[];
}

export interface RunningCodecServer {
  url: string;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/**
 * Temporal's remote codec protocol (`POST /decode`, `POST /encode`, `{"payloads": [...]}` with bytes
 * in base64), so the Web UI and `temporal` CLI show compressed and offloaded payloads decoded.
 */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  const server = http.createServer((request, response) => {
    void handle(options, request, response).catch((error: Error) => {
      if (!response.headersSent)
        reply(response, 500, { message: error.message }, corsHeaders(request, options));
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host}:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function handle(
  options: CodecServerOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
) {
  const origin = request.headers.origin;
  if (origin !== undefined && !options.allowedOrigins.includes(origin)) {
    reply(response, 403, { message: `origin ${origin} may not use this codec server` });
    return;
  }
  const cors = corsHeaders(request, options);
  if (request.method === 'OPTIONS') {
    response.writeHead(204, cors).end();
    return;
  }
  const route = new URL(request.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
  if (request.method !== 'POST' || (route !== '/decode' && route !== '/encode')) {
    reply(response, 404, { message: 'POST /decode or /encode' }, cors);
    return;
  }
  let body: { payloads?: JsonPayload[] };
  try {
    body = JSON.parse(await readBoundedBody(request, MAX_BODY_BYTES)) as { payloads?: JsonPayload[] };
  } catch (error) {
    const tooLarge = error instanceof BodyTooLargeError;
    reply(
      response,
      tooLarge ? 413 : 400,
      { message: tooLarge ? (error as Error).message : `not a JSON body: ${(error as Error).message}` },
      cors,
    );
    return;
  }
  if (!Array.isArray(body.payloads)) {
    reply(response, 400, { message: 'the body has no "payloads" array' }, cors);
    return;
  }
  const payloads = body.payloads.map(fromJson);
  const result =
    route === '/decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
  reply(response, 200, { payloads: result.map(toJson) }, cors);
}

function corsHeaders(request: http.IncomingMessage, options: CodecServerOptions): Record<string, string> {
  const origin = request.headers.origin;
  if (origin === undefined || !options.allowedOrigins.includes(origin)) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST, OPTIONS',
    'access-control-allow-headers': 'Content-Type, X-Namespace, Authorization',
    vary: 'Origin',
  };
}

function reply(
  response: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

function fromJson(payload: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value ?? []).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? []).toString('base64'),
  };
}
