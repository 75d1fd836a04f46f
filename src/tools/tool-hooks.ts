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

export type BeforeToolCallDecision =
  { run: true; params: Record<string, unknown> } | { run: false; reason: string };

/** Runs every `beforeToolCall` in order; a throw propagates (the caller refuses the call). */
export async function runBeforeToolCall(
  hooks: readonly ToolHooks[],
  event: BeforeToolCallEvent,
): Promise<BeforeToolCallDecision> {
  let params = event.params;
  for (const hook of hooks) {
    const result = await hook.beforeToolCall?.({ ...event, params });
    if (!result) continue;
    if (result.block) {
      return { run: false, reason: result.blockReason?.trim() || 'blocked by a before_tool_call hook' };
    }
    if (result.params) params = result.params;
  }
  return { run: true, params };
}

/** Runs every `afterToolCall`; one that throws is reported to `warn` and the others still run. */
export async function runAfterToolCall(
  hooks: readonly ToolHooks[],
  event: AfterToolCallEvent,
  warn: (message: string) => void,
): Promise<void> {
  for (const hook of hooks) {
    try {
      await hook.afterToolCall?.(event);
    } catch (error) {
      warn(`after_tool_call hook failed for ${event.toolName} (${event.toolCallId}): ${String(error)}`);
    }
  }
}

/** Runs every `toolResultPersist` in order, each on the previous one's output; a throw propagates. */
export async function runToolResultPersist(
  hooks: readonly ToolHooks[],
  event: ToolResultPersistEvent,
): Promise<ToolResultPersistEvent['result']> {
  let result = event.result;
  for (const hook of hooks) {
    const rewritten = await hook.toolResultPersist?.({ ...event, result });
    if (rewritten) result = rewritten;
  }
  return result;
}
