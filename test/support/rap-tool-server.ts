import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RapInvocation {
  operation: string;
  arguments: Record<string, unknown>;
  id: string;
  call_id: string | null;
  callback_url: string;
  group_id: string;
  thread_ancestors?: string[];
  user_id?: string;
}

/**
 * A RAP tool server for tests on 127.0.0.1: serves its toolset, answers each invocation with the
 * status `ack` picks for it (200 unless told otherwise) and records invocations and notices. The
 * test plays the tool's part by POSTing callbacks itself.
 */
export async function startRapToolServer(options: {
  name: string;
  tools: Array<{
    name: string;
    description?: string;
    inputSchema?: Record<string, unknown>;
    annotations?: object;
  }>;
  ack?: (invocation: RapInvocation, attempt: number) => number;
  /** Served instead of the toolset, to test validation. */
  toolsetOverride?: unknown;
}) {
  const invocations: RapInvocation[] = [];
  const closedThreads: string[] = [];
  const cancelled: Array<{ thread_id: string; tool_call_id: string }> = [];
  const attempts = new Map<string, number>();
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const json = body ? (JSON.parse(body) as Record<string, unknown>) : {};
      if (request.method === 'GET' && request.url === '/.well-known/rap-toolset') {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify(
            options.toolsetOverride ?? {
              name: options.name,
              endpoint: `${url}/invoke`,
              tools: options.tools.map((tool) => ({
                description: `${tool.name} (test tool)`,
                inputSchema: { type: 'object', properties: {} },
                ...tool,
              })),
            },
          ),
        );
        return;
      }
      if (request.url === '/invoke') {
        const invocation = json as unknown as RapInvocation;
        const attempt = (attempts.get(invocation.id) ?? 0) + 1;
        attempts.set(invocation.id, attempt);
        invocations.push(invocation);
        response.writeHead(options.ack?.(invocation, attempt) ?? 200).end();
        return;
      }
      if (request.url === '/close_thread') closedThreads.push(String(json.thread_id));
      if (request.url === '/cancel_tool_call')
        cancelled.push(json as { thread_id: string; tool_call_id: string });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    invocations,
    closedThreads,
    cancelled,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** POSTs a callback message as a tool would; returns the HTTP status. */
export async function postCallback(callbackUrl: string, message: Record<string, unknown>): Promise<number> {
  const response = await fetch(callbackUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(message),
  });
  await response.body?.cancel();
  return response.status;
}
