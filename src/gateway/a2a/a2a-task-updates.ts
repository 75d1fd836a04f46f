import type { A2AStreamResponse, A2ATaskStatus } from '../../shared/a2a';
import type { PendingApproval } from '../../shared/approvals';
import type { AgentEvent } from '../../shared/events';
import { type RunSought, endsRun, learnRun } from '../../client/run-end';
import { CURSOR_KEY, type StreamCursor, encodeCursor } from './a2a-cursor';
import {
  type TaskRef,
  answerArtifact,
  approvalParts,
  finalStatusOf,
  statusOf,
} from '../../shared/a2a-task-parts';

/** Where a text chunk's metadata says at which character of its model call's text it starts. */
export const TEXT_OFFSET_KEY = 'durable-agent/offset';

/** One streamed update and the cursor a client resumes after it from. */
export interface TaskUpdate {
  response: A2AStreamResponse;
  cursor: string;
  /** The task takes no more updates in this stream: it ended, or it waits for the caller. */
  closes: boolean;
}

/** The events of the updates that say a run waits (or no longer waits) for a decision. */
const APPROVAL_EVENTS = new Set<AgentEvent['type']>([
  'approval_requested',
  'approval_counted',
  'approval_decided',
]);

/** Whether making the updates of `event` needs the approvals pending now. */
export function needsPending(event: AgentEvent): boolean {
  return APPROVAL_EVENTS.has(event.type);
}

/**
 * Turns a conversation's events into one task's A2A updates: the run that took the task's message
 * is `working`; each model call's text streams as an artifact of its own in chunks (`append`);
 * tool calls and their results are `working` updates with a data part; a decision waited for is
 * `input-required` with what waits; the run's end is the `answer` artifact and the final state.
 * Text already sent before `resume` is not sent again.
 */
export class TaskUpdates {
  private sought: RunSought;
  private seq: number;
  private readonly textSent = new Map<string, number>();
  /** The model call whose text was streamed last, and how far: every cursor carries it. */
  private lastText?: { call: string; textEnd: number };
  private runEvents: AgentEvent[] = [];
  /** The answer artifact of the run's end was sent before the stream resumed. */
  private readonly answered: boolean;

  constructor(
    private readonly ref: TaskRef,
    from: { afterRun: number; cursor: StreamCursor },
  ) {
    this.seq = from.cursor.seq;
    this.answered = from.cursor.answered === true;
    this.sought = {
      messageId: ref.messageId,
      afterRun: from.afterRun,
      ...(from.cursor.run !== undefined ? { run: from.cursor.run } : {}),
    };
    if (from.cursor.call !== undefined) {
      this.lastText = { call: from.cursor.call, textEnd: from.cursor.textEnd ?? 0 };
      this.textSent.set(this.lastText.call, this.lastText.textEnd);
    }
  }

  /** The run the task's message is in, once known. */
  get run(): number | undefined {
    return this.sought.run;
  }

  /** The updates `event` makes; `pending`: the approvals pending now, for the events `needsPending` names. */
  updatesFor(event: AgentEvent, pending: readonly PendingApproval[] = []): TaskUpdate[] {
    const before = this.sought.run;
    this.sought = learnRun(this.sought, event);
    if (event.type === 'model_text') return this.text(event);
    this.seq = Math.max(this.seq, event.seq);
    const run = this.sought.run;
    if (run === undefined || event.run !== run) return [];
    this.runEvents.push(event);
    if (endsRun(event, this.sought)) {
      const answer = this.answered ? undefined : answerArtifact(event);
      // The answer's cursor stands before the run's end, marked answered: resumed from it, a stream
      // sends the final status and not the answer again.
      const beforeEnd = { seq: event.seq - 1, answered: true };
      return [
        ...(answer
          ? [
              this.update(
                { artifactUpdate: this.base({ artifact: answer, lastChunk: true }) },
                false,
                beforeEnd,
              ),
            ]
          : []),
        this.update(
          { statusUpdate: this.base({ status: finalStatusOf(this.ref, event, this.runEvents) }) },
          true,
        ),
      ];
    }
    if (before === undefined) return [this.status(statusOf(this.ref, 'TASK_STATE_WORKING', event.at))];
    switch (event.type) {
      case 'tool_execution_start':
        return [
          this.tool(event.at, event.seq, {
            kind: 'tool_call',
            toolCallId: event.toolCallId,
            tool: event.toolName,
            arguments: event.args,
          }),
        ];
      case 'tool_execution_end':
        return [
          this.tool(event.at, event.seq, {
            kind: 'tool_result',
            toolCallId: event.toolCallId,
            tool: event.toolName,
            isError: event.isError,
            ...(event.status !== undefined ? { status: event.status } : {}),
            preview: event.preview,
          }),
        ];
      case 'approval_requested':
      case 'approval_counted':
      case 'approval_decided': {
        const waiting = pending.filter((approval) => approval.run === run);
        if (waiting.length === 0) return [this.status(statusOf(this.ref, 'TASK_STATE_WORKING', event.at))];
        const message = { key: `wait-${event.seq}`, parts: approvalParts(waiting) };
        return [this.status(statusOf(this.ref, 'TASK_STATE_INPUT_REQUIRED', event.at, message), true)];
      }
      default:
        return [];
    }
  }

  private text(event: Extract<AgentEvent, { type: 'model_text' }>): TaskUpdate[] {
    if (this.sought.run === undefined || event.run !== this.sought.run) return [];
    const sent = this.textSent.get(event.call) ?? 0;
    const end = event.offset + event.text.length;
    if (end <= sent) return [];
    const from = Math.max(sent, event.offset);
    const text = event.text.slice(from - event.offset);
    this.textSent.set(event.call, end);
    // Where the chunk starts in the call's text: past what was sent means some was not seen (text
    // made while nobody followed the task); the `answer` artifact always holds the answer whole.
    const artifact = {
      artifactId: `text-${event.call}`,
      name: 'model text',
      parts: [{ text, mediaType: 'text/plain' }],
      metadata: { [TEXT_OFFSET_KEY]: from },
    };
    this.lastText = { call: event.call, textEnd: end };
    return [this.update({ artifactUpdate: this.base({ artifact, append: sent > 0 }) })];
  }

  private tool(at: number, seq: number, data: Record<string, unknown>): TaskUpdate {
    const message = { key: `tool-${seq}`, parts: [{ data, mediaType: 'application/json' }] };
    return this.status(statusOf(this.ref, 'TASK_STATE_WORKING', at, message));
  }

  private status(status: A2ATaskStatus, closes = false): TaskUpdate {
    return this.update({ statusUpdate: this.base({ status }) }, closes);
  }

  private base<T extends object>(fields: T): T & { taskId: string; contextId: string } {
    return { taskId: this.ref.taskId, contextId: this.ref.contextId, ...fields };
  }

  private update(
    response: A2AStreamResponse,
    closes = false,
    at: Pick<StreamCursor, 'seq' | 'answered'> = { seq: this.seq },
  ): TaskUpdate {
    const cursor = encodeCursor({
      ...at,
      ...(this.sought.run !== undefined ? { run: this.sought.run } : {}),
      ...(this.lastText ?? {}),
    });
    const payload = Object.values(response)[0] as { metadata?: Record<string, unknown> };
    payload.metadata = { ...payload.metadata, [CURSOR_KEY]: cursor };
    return { response, cursor, closes };
  }
}
