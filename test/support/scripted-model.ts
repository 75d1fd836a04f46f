/**
 * A scripted OpenAI-compatible chat-completions model: each request takes the next step of the
 * script and is answered as a server-sent-event stream. Running out of steps fails loudly.
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

export type ScriptedReply =
  { text?: string; toolCalls?: ScriptedToolCall[] } | { status: number; error: string };

export type ScriptStep = ScriptedReply | ((request: ChatRequest) => ScriptedReply);

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class ModelScript {
  readonly requests: ChatRequest[] = [];
  private next = 0;
  exhausted = false;

  constructor(private readonly steps: ScriptStep[]) {}

  get remaining(): number {
    return this.steps.length - this.next;
  }

  answer(request: ChatRequest): HttpAnswer {
    this.requests.push(request);
    const step = this.steps[this.next++];
    if (!step) {
      this.exhausted = true;
      return errorAnswer(400, `model script exhausted after ${this.steps.length} replies`);
    }
    const reply = typeof step === 'function' ? step(request) : step;
    if ('status' in reply) return errorAnswer(reply.status, reply.error);
    return {
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: sseBody(reply, request.model),
    };
  }
}

function errorAnswer(status: number, message: string): HttpAnswer {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { message, type: 'scripted_error', code: null } }),
  };
}

/** The reply as a chat.completion.chunk stream: text in two deltas, each tool call's arguments in two. */
function sseBody(reply: { text?: string; toolCalls?: ScriptedToolCall[] }, model: string): string {
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const chunk = (
    delta: Record<string, unknown>,
    finish: string | null = null,
    extra: Record<string, unknown> = {},
  ) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  let body = chunk({ role: 'assistant' });
  if (reply.text) {
    const half = Math.ceil(reply.text.length / 2);
    body += chunk({ content: reply.text.slice(0, half) }) + chunk({ content: reply.text.slice(half) });
  }
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
    const half = Math.ceil(args.length / 2);
    body += chunk({
      tool_calls: [
        {
          index,
          id: call.id ?? `call_${index}_${id.slice(-6)}`,
          type: 'function',
          function: { name: call.name, arguments: '' },
        },
      ],
    });
    body += chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] });
    body += chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] });
  });
  body += chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
  body += `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`;
  return `${body}data: [DONE]\n\n`;
}
