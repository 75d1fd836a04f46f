import { z } from 'zod';
import { ToolProfileSchema } from './tool-catalog';

/** The tool that starts a sub-agent. It runs in the workflow (as a child workflow), not as an activity. */
export const SPAWN_TOOL_NAME = 'sessions_spawn';

/** Sub-agents may start sub-agents, this many levels deep at most. */
export const MAX_SUB_AGENT_DEPTH = 3;

export const SpawnArgumentsSchema = z.object({
  task: z
    .string()
    .trim()
    .min(1)
    .describe('What the sub-agent should do; its whole answer comes back as the result'),
  profile: ToolProfileSchema.optional().describe(
    'Which tools the sub-agent gets (default: the same as yours)',
  ),
});
export type SpawnArguments = z.infer<typeof SpawnArgumentsSchema>;

/** The child conversation's id: the parent's plus the tool call's, so a replayed start finds the same child. */
export function subAgentId(parentId: string, toolCallId: string): string {
  const call = toolCallId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return `${parentId.slice(0, 180)}.sub-${call}`;
}
