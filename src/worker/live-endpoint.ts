import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LiveModelCalls } from '../activities/live-model-calls';
import type { LocalCancelRequests } from '../activities/local-cancel-requests';

export interface LiveEndpointOptions {
  host: string;
  port: number;
  /** The base URL other processes reach this one at; `http://host:port` when absent. */
  advertisedUrl?: string;
  calls: LiveModelCalls;
  cancels: LocalCancelRequests;
}

export interface LiveEndpoint {
  /** The base URL advertised (in the worker's identity and in model calls' heartbeat details). */
  url: string;
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
 */
export async function startLiveEndpoint(options: LiveEndpointOptions): Promise<LiveEndpoint> {
  const server = http.createServer((request, response) => {
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
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const url = (options.advertisedUrl ?? `http://${host}:${port}`).replace(/\/+$/, '');
  options.calls.baseUrl = url;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (options.calls.baseUrl === url) options.calls.baseUrl = undefined;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
