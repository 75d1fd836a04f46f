import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ResponseTooLargeError, readBoundedText } from './bounded-response';
import { inertLine } from './inert-text';
import { type RemoteTask, RemoteTaskSchema, type SendResult, SendResultSchema } from './remote-task';

/** The most of one JSON-RPC answer read: a task with its artifacts. */
export const MAX_RPC_RESPONSE_BYTES = 4 * 1024 * 1024;
/** How long one JSON-RPC call may take, whole, unless told otherwise. */
const RPC_TIMEOUT_MS = 30_000;

/** A JSON-RPC error the remote answered with: the call reached it and it refused. */
export class RemoteRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RemoteRpcError';
  }
}

/** The remote could not be reached, or answered with something that is not a JSON-RPC answer. */
export class RemoteUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RemoteUnreachableError';
  }
}

const RpcAnswerSchema = z.union([
  z.object({ result: z.unknown() }).refine((answer) => answer.result !== undefined),
  z.object({ error: z.object({ code: z.number(), message: z.string().max(100_000) }) }),
]);

/** A user message's text, under an id the caller chooses; `taskId` continues a task that waits. */
export interface OutgoingMessage {
  messageId: string;
  text: string;
  taskId?: string;
}

/**
 * A2A 1.0's JSON-RPC binding, the calls a client of a remote agent makes: every answer read up to
 * MAX_RPC_RESPONSE_BYTES within 30 s, no redirect followed, the bearer token sent to `endpoint`
 * only (which the card check keeps on the card's origin).
 */
export class RemoteAgentClient {
  constructor(
    private readonly endpoint: string,
    private readonly options: { token?: string; fetchImpl?: typeof fetch; timeoutMs?: number } = {},
  ) {}

  /** Sends the message and answers at once with the task it started (or the message that answers it). */
  async send(message: OutgoingMessage, signal?: AbortSignal): Promise<SendResult> {
    const result = await this.call(
      'SendMessage',
      {
        message: {
          messageId: message.messageId,
          role: 'ROLE_USER',
          parts: [{ text: message.text }],
          ...(message.taskId !== undefined ? { taskId: message.taskId } : {}),
        },
        configuration: { returnImmediately: true, historyLength: 0 },
      },
      signal,
    );
    return parsed(SendResultSchema, result, 'SendMessage');
  }

  async getTask(taskId: string, signal?: AbortSignal): Promise<RemoteTask> {
    return parsed(
      RemoteTaskSchema,
      await this.call('GetTask', { id: taskId, historyLength: 0 }, signal),
      'GetTask',
    );
  }

  async cancelTask(taskId: string, signal?: AbortSignal): Promise<void> {
    await this.call('CancelTask', { id: taskId }, signal);
  }

  private async call(method: string, params: unknown, signal?: AbortSignal): Promise<unknown> {
    let response: Response;
    try {
      response = await (this.options.fetchImpl ?? fetch)(this.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          'a2a-version': '1.0',
          ...(this.options.token ? { authorization: `Bearer ${this.options.token}` } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params }),
        redirect: 'error',
        signal: AbortSignal.any([
          AbortSignal.timeout(this.options.timeoutMs ?? RPC_TIMEOUT_MS),
          ...(signal ? [signal] : []),
        ]),
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new RemoteUnreachableError(`${method} did not reach ${this.endpoint}: ${messageOf(error)}`);
    }
    let text: string;
    try {
      text = await readBoundedText(response, MAX_RPC_RESPONSE_BYTES);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (error instanceof ResponseTooLargeError)
        throw new RemoteRpcError(-32603, `${method}: ${error.message}`);
      throw new RemoteUnreachableError(`${method}: the answer broke off: ${messageOf(error)}`);
    }
    let answer: z.infer<typeof RpcAnswerSchema>;
    try {
      answer = RpcAnswerSchema.parse(JSON.parse(text));
    } catch {
      const status = response.status === 200 ? '' : ` (HTTP ${response.status})`;
      throw new RemoteUnreachableError(`${method}: the answer${status} is not a JSON-RPC answer`);
    }
    if ('error' in answer) throw new RemoteRpcError(answer.error.code, inertLine(answer.error.message, 500));
    return answer.result;
  }
}

function parsed<T>(schema: z.ZodType<T>, result: unknown, method: string): T {
  const read = schema.safeParse(result);
  if (!read.success) throw new RemoteRpcError(-32603, `${method}: the answer is not what A2A 1.0 sends`);
  return read.data;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
