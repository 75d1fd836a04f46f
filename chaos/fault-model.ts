import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the model endpoint does to one request instead of answering it well. */
export type ModelFault =
  | 'none'
  | 'rate_limited_retry_after'
  | 'rate_limited'
  | 'server_error'
  | 'connection_reset'
  | 'stream_cut'
  | 'arguments_not_json'
  | 'unknown_tool'
  | 'slow_first_token';

export interface FaultModelServer {
  baseUrl: string;
  /** Faults injected so far, by kind. */
  injected: Map<ModelFault, number>;
  close(): Promise<void>;
}

/** How long a `slow_first_token` answer keeps the stream open without a token. */
const SLOW_FIRST_TOKEN_MS = 6_000;

interface ChatRequest {
  messages: Array<{ role: string; content?: unknown; tool_call_id?: string }>;
}

/**
 * A model endpoint on 127.0.0.1 that plays a fixed agent and misbehaves at random. Asked `Do KEY`
 * (KEY such as `trial-3` or `trial-3-r2`) it calls `record` (a side effect that must happen at most
 * once) with KEY and `slow_read`; asked `Do KEY with a sub-agent` it calls `record` and
 * `sessions_spawn` with the task `Do KEY-sub`; once the results are in, it answers `answered KEY`.
 * Only the messages since the last user message count, so each run of a conversation starts over.
 * With probability `faultRate` a request gets one of the faults instead; a tool call it botched
 * (arguments not JSON, an unknown tool) comes back as an error result, and the agent then answers
 * all the same.
 */
export async function startFaultModel(faultRate: number, random: () => number): Promise<FaultModelServer> {
  const injected = new Map<ModelFault, number>();
  const faults: ModelFault[] = [
    'rate_limited_retry_after',
    'rate_limited',
    'server_error',
    'connection_reset',
    'stream_cut',
    'arguments_not_json',
    'unknown_tool',
    'slow_first_token',
  ];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const chat = JSON.parse(body) as ChatRequest;
      const fault = random() < faultRate ? faults[Math.floor(random() * faults.length)]! : 'none';
      if (fault !== 'none') injected.set(fault, (injected.get(fault) ?? 0) + 1);
      answer(chat, fault, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    injected,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function answer(chat: ChatRequest, fault: ModelFault, response: http.ServerResponse): void {
  const lastUser = chat.messages.map((m) => m.role).lastIndexOf('user');
  const asked = JSON.stringify(chat.messages[lastUser]?.content);
  const key = /Do (trial-[\w-]+)/.exec(asked)?.[1];
  const withSubAgent = asked.includes('with a sub-agent');
  switch (fault) {
    case 'rate_limited_retry_after':
      response.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
      response.end('{"error":{"message":"slow down"}}');
      return;
    case 'rate_limited':
      response
        .writeHead(429, { 'content-type': 'application/json' })
        .end('{"error":{"message":"slow down"}}');
      return;
    case 'server_error':
      response
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"error":{"message":"overloaded"}}');
      return;
    case 'connection_reset':
      response.socket?.destroy();
      return;
    default:
      break;
  }
  const resultsIn = chat.messages.slice(lastUser).some((m) => m.role === 'tool');
  const calls = resultsIn
    ? []
    : [
        { id: `call_${key}_record`, name: 'record', arguments: JSON.stringify({ key }) },
        withSubAgent
          ? {
              id: `call_${key}_spawn`,
              name: 'sessions_spawn',
              arguments: JSON.stringify({ task: `Do ${key}-sub` }),
            }
          : { id: `call_${key}_read`, name: 'slow_read', arguments: JSON.stringify({ ms: 800 }) },
      ];
  if (fault === 'arguments_not_json' && calls[1]) calls[1].arguments = '{"ms": 8';
  if (fault === 'unknown_tool' && calls[1]) calls[1].name = 'no_such_tool';
  const chunks: unknown[] = [];
  const chunk = (delta: unknown, finish: string | null = null) =>
    chunks.push({
      id: 'x',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'chaos',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
  if (calls.length) {
    calls.forEach((call, index) =>
      chunk({
        tool_calls: [
          { index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
        ],
      }),
    );
    chunk({}, 'tool_calls');
  } else {
    for (const word of `answered ${key}`.split(' ')) chunk({ content: `${word} ` });
    chunk({}, 'stop');
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (fault === 'slow_first_token') {
    // Accepted, then nothing for longer than the worker waits for a first token (chaos-worker.ts).
    response.flushHeaders();
    setTimeout(() => response.destroyed || response.end(), SLOW_FIRST_TOKEN_MS);
    return;
  }
  const lines = chunks.map((piece) => `data: ${JSON.stringify(piece)}\n\n`);
  if (fault === 'stream_cut') {
    // Half the answer, then the connection drops.
    response.write(lines.slice(0, Math.max(1, Math.floor(lines.length / 2))).join(''));
    setTimeout(() => response.socket?.destroy(), 20);
    return;
  }
  response.end(`${lines.join('')}data: [DONE]\n\n`);
}
