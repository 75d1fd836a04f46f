import { z } from 'zod';
import { ToolProfileSchema } from './tool-catalog';

/** The tool that starts a sub-agent. It runs in the workflow (as a child workflow), not as an activity. */
export const SPAWN_TOOL_NAME = 'sessions_spawn';

/** Sub-agents may start sub-agents, this many levels deep at most, whatever a conversation asks. */
export const MAX_SUB_AGENT_DEPTH = 3;
/** The most sub-agents one run may start, whatever a conversation asks. */
export const MAX_SUB_AGENTS_PER_RUN = 32;
/** The longest a sub-agent may take, whatever a conversation asks: one day. */
export const MAX_SUB_AGENT_TIMEOUT_MS = 24 * 60 * 60 * 1_000;

/**
 * How far a conversation's model may delegate. A sub-agent inherits its parent's limits, so the
 * model cannot raise them by spawning; the constants above bound what any conversation may set.
 */
export const SubAgentLimitsSchema = z.object({
  /** Levels of sub-agents below a top-level conversation. */
  maxDepth: z.number().int().min(0).max(MAX_SUB_AGENT_DEPTH).default(MAX_SUB_AGENT_DEPTH),
  /** Sub-agents one run may start; the calls beyond get an error result. */
  maxPerRun: z.number().int().min(0).max(MAX_SUB_AGENTS_PER_RUN).default(8),
  /** A sub-agent still working after this long is stopped and its call fails (whole chain of runs). */
  timeoutMs: z
    .number()
    .int()
    .min(1_000)
    .max(MAX_SUB_AGENT_TIMEOUT_MS)
    .default(60 * 60 * 1_000),
});
export type SubAgentLimits = z.infer<typeof SubAgentLimitsSchema>;

export const SpawnArgumentsSchema = z.object({
  task: z
    .string()
    .trim()
    .min(1)
    .describe('What the sub-agent should do; its whole answer comes back as the result'),
  profile: ToolProfileSchema.optional().describe(
    'Which tools the sub-agent gets, narrowed to those you have yourself (default: the same as yours)',
  ),
});
export type SpawnArguments = z.infer<typeof SpawnArgumentsSchema>;

/** The child conversation's id: the parent's plus the tool call's, so a replayed start finds the same child. */
export function subAgentId(parentId: string, toolCallId: string): string {
  const call = toolCallId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return `${parentId.slice(0, 180)}.sub-${call}`;
}
