import { condition } from '@temporalio/workflow';
import type { ClientToolReceipt, ClientToolResult, PendingClientToolCall } from '../shared/client-tools';
import type { ToolCall } from '../shared/messages';
import { type ToolOutcome, errorOutcome, okOutcome } from '../shared/tool-outcome';
import { workflowTime } from './workflow-time';

/**
 * The client tool calls of a conversation that wait for their sender's result, and the results
 * delivered for them. Workflow state only: a call waits on a condition, so no worker holds it, and
 * a worker that dies while a page takes its time loses nothing. A result is taken once: the update
 * that delivers it is refused for a call that waits for nothing (unknown, answered, or ended).
 */
export class ClientToolCalls {
  private readonly pending = new Map<string, PendingClientToolCall>();
  private readonly results = new Map<string, ClientToolResult>();

  /** `timeoutMs`: how long a call waits before it fails (the conversation's approval timeout); forever when absent. */
  constructor(private readonly timeoutMs: number | undefined) {}

  /** Some call waits for a result. */
  get waiting(): boolean {
    return this.pending.size > 0;
  }

  pendingCalls(): PendingClientToolCall[] {
    return [...this.pending.values()];
  }

  /** Throws (refusing the update) unless `result` answers a call that waits for one. */
  check(result: ClientToolResult): PendingClientToolCall {
    const call = this.pending.get(result.toolCallId);
    if (!call) throw new Error(`no client tool call ${result.toolCallId} waits for a result`);
    if (this.results.has(result.toolCallId))
      throw new Error(`client tool call ${result.toolCallId} has its result already`);
    return call;
  }

  /** Takes a checked result; the call waiting for it goes on. */
  answer(result: ClientToolResult): ClientToolReceipt {
    const call = this.check(result);
    this.results.set(result.toolCallId, result);
    return { toolCallId: call.toolCallId, toolName: call.toolName };
  }

  /**
   * Waits for the sender's result to `call` and returns it as the call's outcome. A steer or abort
   * cancels the wait (the fan-out makes that an aborted result); the timeout makes it a Timeout error.
   */
  async outcomeOf(call: ToolCall, run: number): Promise<ToolOutcome> {
    const requestedAt = workflowTime();
    const { timeoutMs } = this;
    this.pending.set(call.id, {
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
      run,
      requestedAt,
      ...(timeoutMs !== undefined ? { expiresAt: requestedAt + timeoutMs } : {}),
    });
    try {
      const answered = () => this.results.has(call.id);
      const inTime =
        timeoutMs === undefined ? (await condition(answered), true) : await condition(answered, timeoutMs);
      if (!inTime) {
        return errorOutcome(call.name, 'Timeout', `the client did not answer within ${timeoutMs! / 1000}s`);
      }
      const result = this.results.get(call.id)!;
      const details = { clientTool: true, ...(result.by !== undefined ? { by: result.by } : {}) };
      if (result.isError) {
        const failed = errorOutcome(call.name, 'ExecutionFailed', result.text);
        return { ...failed, details: { errorKind: 'ExecutionFailed', ...details } };
      }
      return okOutcome({ content: [{ type: 'text', text: result.text || '(no output)' }], details });
    } finally {
      this.pending.delete(call.id);
      this.results.delete(call.id);
    }
  }
}
