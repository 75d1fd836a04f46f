import type { ToolResultContent } from '../shared/content';
import type { ToolResult } from './tool';

/** Which call a hook is looking at. */
export interface ToolCallInfo {
  toolName: string;
  toolCallId: string;
  conversationId: string;
}

export interface BeforeToolCallEvent extends ToolCallInfo {
  /** The arguments as the tool will get them: normalised, validated, defaults filled in. */
  params: Record<string, unknown>;
}

/** Nothing (run as is), new `params` (validated again by the tool's schema), or a block. */
export type BeforeToolCallResult = {
  params?: Record<string, unknown>;
  block?: boolean;
  /** What the model reads in `{"status":"blocked","tool":…,"reason":…}`. */
  blockReason?: string;
} | void;

export interface AfterToolCallEvent extends ToolCallInfo {
  params: Record<string, unknown>;
  /** What the tool returned, or the error result it became. */
  result: ToolResult;
  isError: boolean;
  durationMs: number;
}

export interface ToolResultPersistEvent extends ToolCallInfo {
  /** The result about to enter the transcript (already truncated to the model's limit). */
  result: { content: ToolResultContent[]; details?: unknown };
  isError: boolean;
}

/** Replacement content and details for the transcript, or nothing to keep the result as it is. */
export type ToolResultPersistResult = { content: ToolResultContent[]; details?: unknown } | void;

type MaybePromise<T> = T | Promise<T>;

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
  beforeToolCall?(event: BeforeToolCallEvent): MaybePromise<BeforeToolCallResult>;
  afterToolCall?(event: AfterToolCallEvent): MaybePromise<void>;
  toolResultPersist?(event: ToolResultPersistEvent): MaybePromise<ToolResultPersistResult>;
}
