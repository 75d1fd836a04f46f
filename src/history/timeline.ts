import type { ToolErrorKind } from '../shared/tool-errors';
import type { ToolBlocker, ToolOutcomeStatus } from '../shared/tool-outcome';

/**
 * A conversation's past, read from its Temporal history: what `durable-agent history` prints. Every
 * item is something history proves happened; nothing comes from the workflow's own (bounded) event log.
 */
export interface Timeline {
  /** The conversation's id. */
  conversationId: string;
  /** The Temporal executions of the conversation, oldest first: one more per continue-as-new. */
  executions: TimelineExecution[];
  /** What happened, in history order. */
  items: TimelineItem[];
}

/** One Temporal execution of the conversation. */
export interface TimelineExecution {
  /** Its Temporal run id. */
  runId: string;
  /** When it started, ISO 8601. */
  startedAt: string;
  /** When it closed, ISO 8601; absent while open. */
  closedAt?: string;
  /** `running` while the execution is open. */
  status: ExecutionStatus;
}

/** How an execution stands: open (`running`) or how it closed. */
export type ExecutionStatus =
  'running' | 'completed' | 'failed' | 'terminated' | 'timed_out' | 'canceled' | 'continued_as_new';

/** How an activity (a model call, a tool call, any other) ended; `running` when history has no end yet. */
export type ActivityOutcome = 'completed' | 'failed' | 'timed_out' | 'cancelled' | 'running';

/** How a signal or an update reached the conversation; `start` is the input it was started with. */
export type Delivery = 'signal' | 'update' | 'start';

/** What every timeline item has. */
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

/** An execution started: the conversation's first, or one continued as new. */
export interface ExecutionStartedItem extends ItemBase {
  /** Always `execution_started`. */
  kind: 'execution_started';
  /** The execution's Temporal run id. */
  runId: string;
  /** The execution this one continued as new from. */
  continuedFrom?: string;
  /** The task queue it runs on. */
  taskQueue: string;
  /** The conversation options it was started with, as given. */
  options?: unknown;
  /** What a continue-as-new handed over. */
  carried?: {
    /** Messages in the transcript carried over. */
    messages: number;
    /** Messages queued for later runs. */
    queuedMessages: number;
    /** Runs so far. */
    runCount: number;
  };
}

/** A user message reached the conversation. */
export interface UserMessageItem extends ItemBase {
  /** Always `user_message`. */
  kind: 'user_message';
  /** The message's id. */
  messageId: string;
  /** Its text, cut to TIMELINE_TEXT_CHARS. */
  text: string;
  /** Who sent it, when named. */
  sender?: string;
  /** How it arrived. */
  via: Delivery;
}

/** A run started. */
export interface RunStartedItem extends ItemBase {
  /** Always `run_started`. */
  kind: 'run_started';
  /** The run's number. */
  run: number;
  /** The user messages the run took (those in its first model call). */
  messageIds: string[];
}

/** A model call (its activity). */
export interface ModelCallItem extends ItemBase {
  /** Always `model_call`. */
  kind: 'model_call';
  /** Model calls so far in this run, this one included. */
  iteration: number;
  /** How the activity ended. */
  outcome: ActivityOutcome;
  /** From scheduled to closed: waiting for a worker, every attempt and the backoff between them. */
  latencyMs?: number;
  /** Attempts made. */
  attempts: number;
  /** The model that answered. */
  model?: string;
  /** Tokens the endpoint reported. */
  usage?: {
    /** Tokens the model read. */
    inputTokens: number;
    /** Tokens the model wrote. */
    outputTokens: number;
  };
  /** The answer's text, cut to TIMELINE_TEXT_CHARS. */
  text?: string;
  /** The tool calls the model asked for (id and name). */
  toolCalls: Array<{
    /** The call's id. */
    id: string;
    /** The tool's name. */
    name: string;
  }>;
  /** Why the activity failed, timed out or was cancelled. */
  error?: string;
}

/** A tool call the model asked for, and what became of it. */
export interface ToolCallItem extends ItemBase {
  /** Always `tool_call`. */
  kind: 'tool_call';
  /** The call's id. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The arguments as the model wrote them (text), or as the tool received them once parsed. */
  arguments: unknown;
  /**
   * False when the workflow answered the call itself without running the tool: an unknown tool, bad
   * arguments, a refused approval, or a run interrupted before the call started.
   */
  ran: boolean;
  /** How its activity ended; `not_run` when no activity ran it. */
  outcome: ActivityOutcome | 'not_run';
  /** How long its activity took, from scheduled to closed, in ms. */
  durationMs?: number;
  /** Attempts made. */
  attempts?: number;
  /** The result was an error the model reads (`{"status":"error"|"blocked"|"aborted",…}`). */
  isError?: boolean;
  /** Interrupted by steer or abort. */
  aborted?: boolean;
  /** What became of the call, from its outcome's fields (derived for outcomes recorded before they existed). */
  status?: ToolOutcomeStatus;
  /** How an error went wrong (NotFound, InvalidArgs, ExecutionFailed, …). */
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

/** A decision on a pending approval. */
export interface ApprovalItem extends ItemBase {
  /** Always `approval`. */
  kind: 'approval';
  /** The call decided on. */
  toolCallId: string;
  /** The decision (`allow_once`, `allow_always`, `reject_once`, `reject_always`). */
  decision: string;
  /** Who decided. */
  by: string;
  /** Their reason, when given. */
  reason?: string;
  /** `timeout`: nobody decided in time and the call was rejected. */
  via: Delivery | 'timeout';
  /** Why the conversation refused the decision (an update that failed). */
  refused?: string;
}

/** A steering message. */
export interface SteerItem extends ItemBase {
  /** Always `steer`. */
  kind: 'steer';
  /** The message's id. */
  messageId: string;
  /** Its text, cut to TIMELINE_TEXT_CHARS. */
  text: string;
  /** How it arrived. */
  via: Delivery;
  /** From the update's receipt: a run was in progress and was interrupted. */
  interrupting?: boolean;
  /** Why the conversation refused it (an update that failed). */
  refused?: string;
}

/** An abort of the run in progress. */
export interface AbortItem extends ItemBase {
  /** Always `abort`. */
  kind: 'abort';
  /** Why, when given. */
  reason?: string;
  /** Who aborted, when named. */
  by?: string;
  /** How it arrived. */
  via: Delivery;
  /** From the update's receipt: the run that was aborted. */
  abortedRun?: number;
  /** Why the conversation refused it (an update that failed). */
  refused?: string;
}

/** Someone asked the conversation to end. */
export interface EndRequestedItem extends ItemBase {
  /** Always `end_requested`. */
  kind: 'end_requested';
  /** Why, when given. */
  reason?: string;
}

/** An activity other than a model or tool call (tool discovery, compaction, …). */
export interface ActivityItem extends ItemBase {
  /** Always `activity`. */
  kind: 'activity';
  /** The activity's type. */
  activityType: string;
  /** How it ended. */
  outcome: ActivityOutcome;
  /** From scheduled to closed, in ms. */
  durationMs?: number;
  /** Attempts made. */
  attempts: number;
  /** Why it failed, timed out or was cancelled. */
  error?: string;
}

/** A signal or update the timeline has no meaning for. */
export interface MessageItem extends ItemBase {
  /** Which it was. */
  kind: 'signal' | 'update';
  /** The signal's or update's name. */
  name: string;
  /** Its arguments. */
  args: unknown[];
  /** An update's result (a `compact` update's receipt, say). */
  result?: unknown;
  /** Why an update failed. */
  refused?: string;
}

/** The execution continued as new. */
export interface ContinuedAsNewItem extends ItemBase {
  /** Always `continued_as_new`. */
  kind: 'continued_as_new';
  /** The new execution's Temporal run id. */
  newRunId: string;
}

/** The conversation's last execution closed: the conversation is over. */
export interface ExecutionClosedItem extends ItemBase {
  /** Always `execution_closed`. */
  kind: 'execution_closed';
  /** How it closed. */
  status: Exclude<ExecutionStatus, 'running' | 'continued_as_new'>;
  /** The workflow's result, or why it failed or was terminated. */
  detail?: unknown;
}

/** One entry of a timeline, told apart by `kind`. */
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
