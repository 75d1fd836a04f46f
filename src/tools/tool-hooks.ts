import type { ToolResultContent } from '../shared/content';
import type { ToolResult } from './tool';

/** Which call a hook is looking at. */
export interface ToolCallInfo {
  /** The tool's name. */
  toolName: string;
  /** The call's id, as the model gave it. */
  toolCallId: string;
  /** The conversation the call belongs to. */
  conversationId: string;
}

/** What `beforeToolCall` sees: the call, before it runs. */
export interface BeforeToolCallEvent extends ToolCallInfo {
  /** The arguments as the tool will get them: normalised, validated, defaults filled in. */
  params: Record<string, unknown>;
}

/** Nothing (run as is), new `params` (validated again by the tool's schema), or a block. */
export type BeforeToolCallResult = {
  /** Replacement arguments. */
  params?: Record<string, unknown>;
  /** True: the call does not run, and the model reads that it was blocked. */
  block?: boolean;
  /** What the model reads in `{"status":"blocked","tool":…,"reason":…}`. */
  blockReason?: string;
} | void;

/** What `afterToolCall` sees: a call that ran, and how it went. */
export interface AfterToolCallEvent extends ToolCallInfo {
  /** The arguments the tool got. */
  params: Record<string, unknown>;
  /** What the tool returned, or the error result it became. */
  result: ToolResult;
  /** True when the result is an error the model reads. */
  isError: boolean;
  /** How long the tool ran, in ms. */
  durationMs: number;
}

/** What `toolResultPersist` sees: a result about to be recorded in the transcript. */
export interface ToolResultPersistEvent extends ToolCallInfo {
  /** The result about to enter the transcript (already truncated to the model's limit). */
  result: {
    /** What the model will read. */
    content: ToolResultContent[];
    /** What user interfaces and logs will see. */
    details?: unknown;
  };
  /** True when the result is an error the model reads. */
  isError: boolean;
}

/** Replacement content and details for the transcript, or nothing to keep the result as it is. */
export type ToolResultPersistResult = {
  /** The content the model reads instead. */
  content: ToolResultContent[];
  /** The details recorded instead. */
  details?: unknown;
} | void;

/** A value, or a promise of one: a hook may be synchronous or async. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Lifecycle hooks around every tool call, registered in code by whoever runs the worker
 * (`createAgentWorker({ activities: { hooks: [...] } })`). They run inside the tool activity, on the
 * worker, so they may touch the world (a policy service, an audit log); they are called again when
 * an attempt is retried. Several hook sets run in the order given.
 *
 * - `beforeToolCall` may rewrite the parameters or block the call; a later hook sees an earlier
 *   one's parameters, and the first block wins. If it throws, the call does not run (fail closed).
 * - `afterToolCall` observes every call that ran (results and errors); what it throws is logged.
 * - `toolResultPersist` may rewrite any result the activity returns (results, errors, blocks)
 *   before it enters the transcript, e.g. to redact secrets. If it throws, the result is replaced
 *   by an error saying so, never recorded unredacted. Results the workflow makes itself (approval
 *   rejections, interruptions, timeouts) carry no tool output and do not pass through it.
 */
export interface ToolHooks {
  /** Called before a call runs; may rewrite its arguments or block it. */
  beforeToolCall?(event: BeforeToolCallEvent): MaybePromise<BeforeToolCallResult>;
  /** Called after a call ran, with its result or error. */
  afterToolCall?(event: AfterToolCallEvent): MaybePromise<void>;
  /** Called before a result enters the transcript; may replace its content and details. */
  toolResultPersist?(event: ToolResultPersistEvent): MaybePromise<ToolResultPersistResult>;
}
