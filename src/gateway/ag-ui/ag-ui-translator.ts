import type { PendingApproval } from '../../shared/approvals';
import type { PendingClientToolCall } from '../../shared/client-tools';
import type { AgentEvent } from '../../shared/events';
import { type AssistantMessage, textOf, toolCallsOf } from '../../shared/messages';
import { type AgUiCursor, formatCursor } from './ag-ui-cursor';
import type { AgUiEvent, AgUiInterrupt, AgUiState } from './ag-ui-events';
import { approvalInterruptId } from './ag-ui-input';

type EventOf<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** What the translation reads from the conversation besides its events. */
export interface AgUiLookups {
  /** The whole assistant message a `model_response` event stands for (its text and arguments), if still in the transcript. */
  assistantMessage(event: EventOf<'model_response'>): Promise<AssistantMessage | undefined>;
  /** What waits for the page: approvals and its own tool calls. */
  waiting(): Promise<{ approvals: PendingApproval[]; clientCalls: PendingClientToolCall[] }>;
  /** The page's state now (the cursor is the translation's to add). */
  snapshot(): Promise<Omit<AgUiState, 'lastEventId'>>;
}

/** A state snapshot asked for and not yet written: `value` once read, `failure` if the reading failed. */
interface StateRead {
  value?: Omit<AgUiState, 'lastEventId'>;
  failure?: unknown;
  /** The last event handled when it was asked for. */
  askedAtSeq: number;
  /** Asked again because events came while the first reading was under way. */
  again: boolean;
}

/** Events watchers make and the workflow never keeps: they carry the seq of the last kept one. */
const SYNTHETIC = new Set<AgentEvent['type']>(['model_text', 'tool_execution_update', 'model_retry']);

/**
 * One AG-UI run's events, translated from the conversation's: the model's streamed text as text
 * messages, each tool call as start, arguments, end and result, a snapshot of the state whenever
 * what waits for the page changes, and the run's end: finished when the conversation's run ends,
 * interrupted (one interrupt per pending approval) or finished with the page's tool calls pending
 * when the conversation waits for the page. `handle` answers true once the AG-UI run has ended.
 */
export class AgUiTranslator {
  private cursor: AgUiCursor;
  private ended = false;
  /** The state as the run began, written once read: nothing streamed meanwhile waits for it. */
  private firstState: StateRead | undefined;

  constructor(
    private readonly ids: { threadId: string; runId: string },
    start: AgUiCursor,
    private readonly lookups: AgUiLookups,
    private readonly emit: (event: AgUiEvent, cursor: string) => void,
    private readonly options: {
      /** Tools the page carries out: their calls' results are the page's own, not written back. */
      clientToolNames: ReadonlySet<string>;
      /** Runs up to this one are not this AG-UI run's: their end does not end it. */
      afterRun: number;
    },
  ) {
    this.cursor = start;
  }

  get lastEventId(): string {
    return formatCursor(this.cursor);
  }

  get lastSeq(): number {
    return this.cursor.seq;
  }

  /**
   * RUN_STARTED, then the state as it is (or as `state` read it, when it was read before), with the
   * first event handled once it is read. Queries wait for the conversation's workflow task (seconds,
   * on a busy worker) and streamed text need not: nothing waits for this reading. When events came
   * while it was read, it is read once more, so that a page is not shown a state older than them;
   * the state at every approval and at the run's end is read afresh all the same.
   */
  begin(state: Promise<Omit<AgUiState, 'lastEventId'>> = this.lookups.snapshot()): void {
    this.write({ type: 'RUN_STARTED', threadId: this.ids.threadId, runId: this.ids.runId });
    this.firstState = this.readState(state, false);
  }

  /** Translates one event; true once the AG-UI run has ended. Events at or before the cursor are passed over. */
  async handle(event: AgentEvent): Promise<boolean> {
    if (this.ended) return true;
    this.writeFirstStateIfRead();
    if (SYNTHETIC.has(event.type)) {
      // Text stamped before the last event handled belongs to a reply already written whole.
      if (event.type === 'model_text' && event.seq >= this.cursor.seq) this.text(event);
      return false;
    }
    if (event.seq <= this.cursor.seq) return false;
    this.cursor = { seq: event.seq, ...(this.cursor.text ? { text: this.cursor.text } : {}) };
    switch (event.type) {
      case 'model_response':
        await this.response(event);
        return false;
      case 'tool_execution_start':
        return this.options.clientToolNames.has(event.toolName) ? this.endIfWaiting() : false;
      case 'tool_execution_end':
        if (!this.options.clientToolNames.has(event.toolName))
          this.write({
            type: 'TOOL_CALL_RESULT',
            messageId: `result-${event.toolCallId}`,
            toolCallId: event.toolCallId,
            content: event.preview,
            role: 'tool',
          });
        return false;
      case 'approval_requested':
        return this.endIfWaiting();
      case 'approval_decided':
        await this.writeSnapshot();
        return false;
      case 'run_finished':
        if (event.run <= this.options.afterRun) return false;
        await this.finish(event);
        return true;
      default:
        return false;
    }
  }

  /**
   * Ends the AG-UI run if the conversation waits for the page; true if it did. `waiting` is what
   * waits, read no earlier than the last event handled (by default, read now).
   */
  async endIfWaiting(waiting?: Awaited<ReturnType<AgUiLookups['waiting']>>): Promise<boolean> {
    const { approvals, clientCalls } = waiting ?? (await this.lookups.waiting());
    if (approvals.length === 0 && clientCalls.length === 0) return false;
    this.closeText();
    await this.writeSnapshot();
    this.write({
      type: 'RUN_FINISHED',
      threadId: this.ids.threadId,
      runId: this.ids.runId,
      outcome: approvals.length
        ? { type: 'interrupt', interrupts: approvals.map(interruptOf) }
        : { type: 'success', pendingToolCallIds: clientCalls.map((call) => call.toolCallId) },
    });
    this.ended = true;
    return true;
  }

  /** Ends the AG-UI run with nothing to wait for: the conversation is idle or gone. */
  async endIdle(): Promise<void> {
    this.closeText();
    await this.writeSnapshot();
    this.write({ type: 'RUN_FINISHED', threadId: this.ids.threadId, runId: this.ids.runId });
    this.ended = true;
  }

  private async finish(event: EventOf<'run_finished'>): Promise<void> {
    this.closeText();
    await this.writeSnapshot();
    this.ended = true;
    if (event.outcome === 'error') {
      this.write({ type: 'RUN_ERROR', message: 'the run ended with an error', code: 'run_error' });
      return;
    }
    this.write({
      type: 'RUN_FINISHED',
      threadId: this.ids.threadId,
      runId: this.ids.runId,
      result: { outcome: event.outcome },
      outcome: event.outcome === 'aborted' ? { type: 'cancelled' } : { type: 'success' },
    });
  }

  /** Streamed text: a new call opens a message (closing the last), and only characters not yet written are. */
  private text(event: EventOf<'model_text'>): void {
    const open = this.cursor.text;
    if (open?.call !== event.call) {
      this.closeText();
      this.cursor = { seq: this.cursor.seq, text: { call: event.call, chars: 0 } };
      this.write({ type: 'TEXT_MESSAGE_START', messageId: event.call, role: 'assistant' });
    }
    const seen = this.cursor.text!;
    // Text after characters not seen waits: the model's reply brings the rest, gap included.
    if (event.offset > seen.chars) return;
    const delta = event.text.slice(seen.chars - event.offset);
    if (delta.length === 0) return;
    this.cursor = { seq: this.cursor.seq, text: { call: event.call, chars: seen.chars + delta.length } };
    this.write({ type: 'TEXT_MESSAGE_CONTENT', messageId: event.call, delta });
  }

  /** The model's reply: the rest of its text (all of it when none streamed), then its tool calls, whole. */
  private async response(event: EventOf<'model_response'>): Promise<void> {
    const message = await this.lookups.assistantMessage(event);
    const text = message ? textOf(message) : event.text;
    const open = this.cursor.text;
    let messageId: string | undefined;
    if (open) {
      messageId = open.call;
      const rest = text.slice(open.chars);
      if (rest) this.write({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: rest });
      this.closeText();
    } else if (text) {
      messageId = `response-${event.seq}`;
      this.write({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
      this.write({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text });
      this.write({ type: 'TEXT_MESSAGE_END', messageId });
    }
    const calls = message ? toolCallsOf(message) : [];
    for (const { id, name } of event.toolCalls) {
      const whole = calls.find((call) => call.id === id);
      this.write({
        type: 'TOOL_CALL_START',
        toolCallId: id,
        toolCallName: name,
        ...(messageId !== undefined ? { parentMessageId: messageId } : {}),
      });
      if (whole?.arguments) this.write({ type: 'TOOL_CALL_ARGS', toolCallId: id, delta: whole.arguments });
      this.write({ type: 'TOOL_CALL_END', toolCallId: id });
    }
  }

  private closeText(): void {
    const open = this.cursor.text;
    if (!open) return;
    this.cursor = { seq: this.cursor.seq };
    this.write({ type: 'TEXT_MESSAGE_END', messageId: open.call });
  }

  private readState(read: Promise<Omit<AgUiState, 'lastEventId'>>, again: boolean): StateRead {
    const state: StateRead = { askedAtSeq: this.cursor.seq, again };
    read.then(
      (value) => (state.value = value),
      (error: unknown) => (state.failure = error ?? new Error('the state could not be read')),
    );
    return state;
  }

  /** The state as the run began, if it has been read (and is not older than the events handled since, or was read twice). */
  private writeFirstStateIfRead(): void {
    const first = this.firstState;
    if (first?.failure !== undefined) throw first.failure;
    if (first?.value === undefined) return;
    this.firstState =
      first.askedAtSeq !== this.cursor.seq && !first.again
        ? this.readState(this.lookups.snapshot(), true)
        : undefined;
    if (!this.firstState) this.writeState(first.value);
  }

  /** The state now; the first state, if not written yet, is no longer needed. */
  private async writeSnapshot(state = this.lookups.snapshot()): Promise<void> {
    this.firstState = undefined;
    this.writeState(await state);
  }

  private writeState(state: Omit<AgUiState, 'lastEventId'>): void {
    this.write({ type: 'STATE_SNAPSHOT', snapshot: { ...state, lastEventId: this.lastEventId } });
  }

  private write(event: AgUiEvent): void {
    this.emit(event, this.lastEventId);
  }
}

/** A pending approval as an interrupt: the answer it takes is a decision bound to the arguments' SHA-256. */
function interruptOf(approval: PendingApproval): AgUiInterrupt {
  const what = approval.budget ? 'a run paused at its budget' : `the call of ${approval.toolName}`;
  return {
    id: approvalInterruptId(approval.toolCallId),
    reason: approval.budget ? 'budget_approval' : 'tool_approval',
    message: `Allow ${what}?`,
    toolCallId: approval.toolCallId,
    responseSchema: {
      type: 'object',
      properties: {
        decision: { enum: ['allow_once', 'allow_always', 'reject_once', 'reject_always'] },
        argumentsSha256: { const: approval.argumentsSha256 },
        reason: { type: 'string' },
      },
      required: ['decision', 'argumentsSha256'],
    },
    ...(approval.expiresAt !== undefined ? { expiresAt: new Date(approval.expiresAt).toISOString() } : {}),
    metadata: {
      toolName: approval.toolName,
      arguments: approval.arguments,
      argumentsSha256: approval.argumentsSha256,
      risk: approval.risk,
    },
  };
}
