/**
 * A scripted OpenAI-compatible chat-completions model: each request takes the next step of the
 * script and is answered as a server-sent-event stream. Running out of steps fails loudly, and so
 * does a step that throws (an `expect` inside a reply callback): see `ModelScript.answer`.
 */
export interface ChatRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: string | null;
    tool_call_id?: string;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  }>;
  tools?: Array<{
    type: 'function';
    function: { name: string; description: string; parameters: Record<string, unknown> };
  }>;
  stream?: boolean;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** An object is serialised; a string is sent as is (so malformed JSON can be scripted). */
  arguments: string | Record<string, unknown>;
}

export type ScriptedReply = TextReply | { status: number; error: string };

interface TextReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Sent in this many text deltas (default 2), `chunkDelayMs` apart (default all at once). */
  textChunks?: number;
  chunkDelayMs?: number;
  /** The stream's finish_reason (default `stop`, or `tool_calls` with tool calls), e.g. `content_filter`. */
  finishReason?: string;
  /** The usage the last chunk reports (default 10 prompt and 5 completion tokens). */
  usage?: { prompt: number; completion: number; cached?: number; reasoning?: number };
}

export type ScriptStep = ScriptedReply | ((request: ChatRequest) => ScriptedReply);

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body in the pieces to send `delayMs` apart, for a paced stream. */
  paced?: { parts: string[]; delayMs: number };
}

/** Every script this test file made: an error its reply callbacks throw fails the test it happened in. */
const liveScripts = new Set<ModelScript>();

export class ModelScript {
  readonly requests: ChatRequest[] = [];
  private next = 0;
  exhausted = false;
  /** Pieces of paced answers sent so far. */
  partsSent = 0;
  /**
   * What the reply callbacks threw, first first. The endpoint answers such a request with a 400
   * (which the model activity does not retry) naming the error, and the test fails with the error
   * itself: `failIfAnyModelScriptThrew` runs after each test of a file that scripts a model.
   */
  readonly callbackErrors: unknown[] = [];

  constructor(private readonly steps: ScriptStep[]) {
    liveScripts.add(this);
  }

  get remaining(): number {
    return this.steps.length - this.next;
  }

  answer(request: ChatRequest): HttpAnswer {
    this.requests.push(request);
    const index = this.next++;
    const step = this.steps[index];
    if (!step) {
      this.exhausted = true;
      return errorAnswer(400, `model script exhausted after ${this.steps.length} replies`);
    }
    let reply: ScriptedReply;
    try {
      reply = typeof step === 'function' ? step(request) : step;
    } catch (error) {
      this.callbackErrors.push(error);
      return errorAnswer(
        400,
        `the scripted model's step ${index + 1} threw (the test fails with this error): ${(error as Error)?.message ?? String(error)}`,
      );
    }
    if ('status' in reply) return errorAnswer(reply.status, reply.error);
    const parts = sseParts(reply, request.model);
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: parts.join(''),
      ...(reply.chunkDelayMs ? { paced: { parts, delayMs: reply.chunkDelayMs } } : {}),
    };
  }
}

/**
 * Throws the first error the reply callbacks of this file's scripts threw since the last call, and
 * forgets them. Registered after each test and after the file (below); a test may call it to fail sooner.
 */
export function failIfAnyModelScriptThrew(): void {
  const errors = [...liveScripts].flatMap((script) => script.callbackErrors.splice(0));
  if (errors.length === 0) return;
  const first = errors[0];
  if (errors.length > 1 && first instanceof Error) {
    first.message += `\n(and ${errors.length - 1} more error(s) thrown by the scripted model's reply callbacks)`;
  }
  throw first;
}

// An assertion that fails inside a reply callback is otherwise only a rejected model call: the test
// would fail later, with a misleading message, or not at all. Outside Jest (scripts) there is no hook.
if (typeof afterEach === 'function') {
  try {
    afterEach(failIfAnyModelScriptThrew);
    afterAll(failIfAnyModelScriptThrew);
  } catch {
    // Loaded for the first time inside a test, where hooks cannot be added: the test can call it itself.
  }
}

function errorAnswer(status: number, message: string): HttpAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { message, type: 'scripted_error', code: null } }),
  };
}

/** The reply as chat.completion.chunk events: text in `textChunks` deltas, each tool call's arguments in two. */
function sseParts(reply: TextReply, model: string): string[] {
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
    extra: Record<string, unknown> = {},
  ) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const parts = [chunk({ role: 'assistant' })];
  if (reply.text) {
    const size = Math.ceil(reply.text.length / (reply.textChunks ?? 2));
    for (let at = 0; at < reply.text.length; at += size) {
      parts.push(chunk({ content: reply.text.slice(at, at + size) }));
    }
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const half = Math.ceil(args.length / 2);
    parts.push(
      chunk({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${index}_${id.slice(-6)}`,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    parts.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }));
    parts.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }));
  });
  parts.push(chunk({}, reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop')));
  parts.push(
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage: reportedUsage(reply.usage) })}\n\n`,
  );
  parts.push('data: [DONE]\n\n');
  return parts;
}

/** Writes an answer's body: paced answers piece by piece, counting the pieces in `script.partsSent`. */
export async function writeAnswer(
  answer: HttpAnswer,
  script: ModelScript,
  write: (piece: string) => void,
): Promise<void> {
  if (!answer.paced) {
    write(answer.body);
    return;
  }
  for (const part of answer.paced.parts) {
    await new Promise((resolve) => setTimeout(resolve, answer.paced!.delayMs));
    write(part);
    script.partsSent++;
  }
}

/** The text of the tool result for `toolCallId` that the model got in `request`; throws when it got none. */
export function toolResultIn(request: ChatRequest, toolCallId: string): string {
  const content = request.messages.find(
    (message) => message.role === 'tool' && message.tool_call_id === toolCallId,
  )?.content;
  if (typeof content !== 'string') throw new Error(`no result for ${toolCallId} in the request`);
  return content;
}

/** A reply's usage as an OpenAI-compatible endpoint reports it. */
function reportedUsage(usage: TextReply['usage'] = { prompt: 10, completion: 5 }): Record<string, unknown> {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    ...(usage.cached !== undefined ? { prompt_tokens_details: { cached_tokens: usage.cached } } : {}),
    ...(usage.reasoning !== undefined
      ? { completion_tokens_details: { reasoning_tokens: usage.reasoning } }
      : {}),
  };
}
