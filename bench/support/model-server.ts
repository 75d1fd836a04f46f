import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type PrefixSample, PromptCache } from './prompt-cache';

/**
 * What a benchmark's user message asks the model for. The text of every bench message is
 * `bench {json}`; the model reads the newest user message and answers instantly, the same way for
 * any number of requests: with `calls` calls of `tool` when the user spoke last, with text after
 * tool results.
 */
export interface Directive {
  /** Conversation id, so the server can tell the driver which conversation got its answer. */
  c: string;
  /** Turn number within the conversation. */
  t: number;
  /** Tool to call; absent: answer with text at once. */
  tool?: string;
  /** Parallel calls of `tool` (default 1). */
  calls?: number;
  /** Arguments of every call (default {}). */
  args?: Record<string, unknown>;
  /** The turn's first request is answered only after this long (a model call in flight); later ones at once. */
  holdMs?: number;
  /** A bench worker with this pid stalls the workflow task that delivers this message (bench 8). */
  stallTaskOf?: number;
}

export function directiveText(directive: Directive): string {
  return `bench ${JSON.stringify(directive)}`;
}

export function parseDirective(text: string): Directive | undefined {
  if (!text.startsWith('bench ')) return undefined;
  try {
    return JSON.parse(text.slice('bench '.length)) as Directive;
  } catch {
    return undefined;
  }
}

interface WireMessage {
  role: string;
  content?: unknown;
}

interface ChatRequest {
  model: string;
  messages: WireMessage[];
  tools?: unknown[];
  stream?: boolean;
}

export interface Reply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
}

export interface ModelServerStats {
  requests: number;
  toolCallReplies: number;
  textReplies: number;
}

export interface BenchModelServer {
  /** OpenAI-compatible base URL, e.g. http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  stats: ModelServerStats;
  /** Called after a text answer to a bench directive has been written to the wire. */
  onAnswer: ((directive: Directive) => void) | undefined;
  /** Called as each request for a bench directive arrives. */
  onRequest: ((directive: Directive) => void) | undefined;
  /** Every bench conversation's requests as a provider's prompt cache sees them; their usage reports it. */
  promptCache: PromptCache;
  close(): Promise<void>;
}

export function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        part && typeof part === 'object' && 'text' in part && typeof part.text === 'string' ? part.text : '',
      )
      .join('');
  }
  return '';
}

let callCounter = 0;

/** The reply to a request: tool calls when the user spoke last, else text. Pure apart from the call ids. */
export function replyTo(messages: WireMessage[]): { reply: Reply; directive?: Directive } {
  const last = messages[messages.length - 1];
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const directive = lastUser ? parseDirective(textOfContent(lastUser.content)) : undefined;
  if (last?.role === 'user' && directive?.tool) {
    const args = JSON.stringify(directive.args ?? {});
    const toolCalls = Array.from({ length: directive.calls ?? 1 }, () => ({
      id: `call_${(++callCounter).toString(36)}`,
      name: directive.tool!,
      arguments: args,
    }));
    return { reply: { toolCalls }, directive };
  }
  return { reply: { text: directive ? `done ${directive.c} turn ${directive.t}` : 'done' }, directive };
}

/** The usage a reply reports: a fixed count, or what the prompt cache says of its request. */
interface ReportedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

const FIXED_USAGE: ReportedUsage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function usageOf(sample: PrefixSample | undefined): ReportedUsage {
  if (!sample) return FIXED_USAGE;
  return {
    prompt_tokens: sample.promptTokens,
    completion_tokens: 5,
    total_tokens: sample.promptTokens + 5,
    prompt_tokens_details: { cached_tokens: sample.cachedTokens },
  };
}

export function sseBody(reply: Reply, model: string, usage: ReportedUsage = FIXED_USAGE): string {
  const id = `chatcmpl-${(++callCounter).toString(36)}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let body = chunk({ role: 'assistant' });
  if (reply.text) body += chunk({ content: reply.text });
  (reply.toolCalls ?? []).forEach((call, index) => {
    body += chunk({
      tool_calls: [
        { index, id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } },
      ],
    });
  });
  body += chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
  body += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage })}\n\n`;
  return `${body}data: [DONE]\n\n`;
}

function jsonBody(reply: Reply, model: string): string {
  return JSON.stringify({
    id: `chatcmpl-${(++callCounter).toString(36)}`,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(reply.toolCalls?.length
            ? {
                tool_calls: reply.toolCalls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        finish_reason: reply.toolCalls?.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

/**
 * A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers at once:
 * streamed (server-sent events) when the request asks for a stream, one JSON body otherwise.
 */
export async function startBenchModelServer(): Promise<BenchModelServer> {
  const stats: ModelServerStats = { requests: 0, toolCallReplies: 0, textReplies: 0 };
  const state: BenchModelServer = {
    baseUrl: '',
    stats,
    onAnswer: undefined,
    onRequest: undefined,
    promptCache: new PromptCache(),
    close: async () => undefined,
  };
  /** Turns (`c`/`t`) whose held first request has come. */
  const held = new Set<string>();
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
        response.writeHead(404).end();
        return;
      }
      stats.requests++;
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest;
      const { reply, directive } = replyTo(body.messages);
      if (directive) state.onRequest?.(directive);
      const turn = directive && `${directive.c}/${directive.t}`;
      const holdMs = turn && directive.holdMs && !held.has(turn) ? directive.holdMs : 0;
      if (turn && holdMs) held.add(turn);
      if (reply.toolCalls) stats.toolCallReplies++;
      else stats.textReplies++;
      const streamed = body.stream === true;
      const sample = directive ? state.promptCache.see(directive.c, body) : undefined;
      const payload = streamed ? sseBody(reply, body.model, usageOf(sample)) : jsonBody(reply, body.model);
      const answer = () => {
        if (response.destroyed) return;
        response.writeHead(200, {
          'content-type': streamed ? 'text/event-stream' : 'application/json',
          'content-length': Buffer.byteLength(payload),
        });
        response.end(payload, () => {
          if (!reply.toolCalls && directive) state.onAnswer?.(directive);
        });
      };
      if (holdMs) setTimeout(answer, holdMs).unref();
      else answer();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.baseUrl = `http://127.0.0.1:${port}/v1`;
  state.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}
