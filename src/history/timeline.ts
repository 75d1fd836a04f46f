import type { ToolErrorKind } from '../shared/tool-errors';
import type { ToolBlocker, ToolOutcomeStatus } from '../shared/tool-outcome';

/**
 * A conversation's past, read from its Temporal history: what `durable-agent history` prints. Every
 * item is something history proves happened; nothing comes from the workflow's own (bounded) event log.
 */
export interface Timeline {
  conversationId: string;
  /** The Temporal executions of the conversation, oldest first: one more per continue-as-new. */
  executions: TimelineExecution[];
  items: TimelineItem[];
}

export interface TimelineExecution {
  runId: string;
  startedAt: string;
  closedAt?: string;
  /** `running` while the execution is open. */
  status: ExecutionStatus;
}

export type ExecutionStatus =
  'running' | 'completed' | 'failed' | 'terminated' | 'timed_out' | 'canceled' | 'continued_as_new';

/** How an activity (a model call, a tool call, any other) ended; `running` when history has no end yet. */
export type ActivityOutcome = 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'running';

/** How a signal or an update reached the conversation; `start` is the input it was started with. */
export type Delivery = 'signal' | 'update' | 'start';

interface ItemBase {
  /** When it began, ISO 8601. */
  at: string;
  /** Milliseconds since the conversation's first execution started. */
  offsetMs: number;
  /** Index (from 1) into `executions`. */
  execution: number;
  /** The history event it begins at, numbered within its execution. */
  eventId: number;
  /** The conversation run (one per message or batch of queued messages) it belongs to, if any. */
  run?: number;
}

export interface ExecutionStartedItem extends ItemBase {
  kind: 'execution_started';
  runId: string;
  /** The execution this one continued as new from. */
  continuedFrom?: string;
  taskQueue: string;
  /** The conversation options it was started with, as given. */
  options?: unknown;
  /** What a continue-as-new handed over. */
  carried?: { messages: number; queuedMessages: number; runCount: number };
}

export interface UserMessageItem extends ItemBase {
  kind: 'user_message';
  messageId: string;
  text: string;
  sender?: string;
  via: Delivery;
}

export interface RunStartedItem extends ItemBase {
  kind: 'run_started';
  run: number;
  /** The user messages the run took (those in its first model call). */
  messageIds: string[];
}

export interface ModelCallItem extends ItemBase {
  kind: 'model_call';
  /** Model calls so far in this run, this one included. */
  iteration: number;
  outcome: ActivityOutcome;
  /** From scheduled to closed: waiting for a worker, every attempt and the backoff between them. */
  latencyMs?: number;
  attempts: number;
  model?: string;
  usage?: { inputTokens: number; outputTokens: number };
  /** The answer's text, cut to TIMELINE_TEXT_CHARS. */
  text?: string;
  toolCalls: Array<{ id: string; name: string }>;
  error?: string;
}

export interface ToolCallItem extends ItemBase {
  kind: 'tool_call';
  toolCallId: string;
  toolName: string;
  /** The arguments as the model wrote them (text), or as the tool received them once parsed. */
  arguments: unknown;
  /**
   * False when the workflow answered the call itself without running the tool: an unknown tool, bad
   * arguments, a refused approval, or a run interrupted before the call started.
   */
  ran: boolean;
  outcome: ActivityOutcome | 'not_run';
  durationMs?: number;
  attempts?: number;
  /** The result was an error the model reads (`{"status":"error"|"blocked"|"aborted",…}`). */
  isError?: boolean;
  /** Interrupted by steer or abort. */
  aborted?: boolean;
  /** What became of the call, from its outcome's fields (derived for outcomes recorded before they existed). */
  status?: ToolOutcomeStatus;
  errorKind?: ToolErrorKind;
  /** Who or what refused a blocked call; unknown for outcomes recorded before outcomes had fields. */
  blockedBy?: ToolBlocker;
  /** The result's text as the model read it, cut to TIMELINE_TEXT_CHARS. */
  result?: string;
  /** A tool that answers by callback answered after the call was interrupted: this answer reached no one. */
  lateResult?: string;
  /** Why the activity failed, timed out or was cancelled. */
  error?: string;
}

export interface ApprovalItem extends ItemBase {
  kind: 'approval';
  toolCallId: string;
  decision: string;
  by: string;
  reason?: string;
  /** `timeout`: nobody decided in time and the call was rejected. */
  via: Delivery | 'timeout';
  /** Why the conversation refused the decision (an update that failed). */
  refused?: string;
}

export interface SteerItem extends ItemBase {
  kind: 'steer';
  messageId: string;
  text: string;
  via: Delivery;
  /** From the update's receipt: a run was in progress and was interrupted. */
  interrupting?: boolean;
  refused?: string;
}

export interface AbortItem extends ItemBase {
  kind: 'abort';
  reason?: string;
  by?: string;
  via: Delivery;
  /** From the update's receipt: the run that was aborted. */
  abortedRun?: number;
  refused?: string;
}

export interface EndRequestedItem extends ItemBase {
  kind: 'end_requested';
  reason?: string;
}

/** An activity other than a model or tool call (tool discovery, compaction, …). */
export interface ActivityItem extends ItemBase {
  kind: 'activity';
  activityType: string;
  outcome: ActivityOutcome;
  durationMs?: number;
  attempts: number;
  error?: string;
}

/** A signal or update the timeline has no meaning for. */
export interface MessageItem extends ItemBase {
  kind: 'signal' | 'update';
  name: string;
  args: unknown[];
  /** An update's result (a `compact` update's receipt, say). */
  result?: unknown;
  /** Why an update failed. */
  refused?: string;
}

export interface ContinuedAsNewItem extends ItemBase {
  kind: 'continued_as_new';
  newRunId: string;
}

export interface ExecutionClosedItem extends ItemBase {
  kind: 'execution_closed';
  status: Exclude<ExecutionStatus, 'running' | 'continued_as_new'>;
  /** The workflow's result, or why it failed or was terminated. */
  detail?: unknown;
}

export type TimelineItem =
  | ExecutionStartedItem
  | UserMessageItem
  | RunStartedItem
  | ModelCallItem
  | ToolCallItem
  | ApprovalItem
  | SteerItem
  | AbortItem
  | EndRequestedItem
  | ActivityItem
  | MessageItem
  | ContinuedAsNewItem
  | ExecutionClosedItem;

/** Texts (answers, results, messages) kept in a timeline item; `--json` consumers get this much. */
export const TIMELINE_TEXT_CHARS = 2_000;
