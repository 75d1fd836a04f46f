import type {
  AfterToolCallEvent,
  BeforeToolCallEvent,
  ToolHooks,
  ToolResultPersistEvent,
} from './tool-hooks';

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
