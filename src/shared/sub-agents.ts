import { z } from 'zod';
import { sha256Hex } from './sha256';
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
 * Unknown keys are refused (a misspelled limit would otherwise be the default).
 */
export const SubAgentLimitsSchema = z.strictObject({
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

/** Parent ids longer than this are shortened in their sub-agents' ids, keeping ids bounded. */
const LONGEST_PARENT_IN_ID = 180;

/**
 * What the ids of a conversation's sub-agents start with: the parent's id and `.sub-`. A parent id
 * over LONGEST_PARENT_IN_ID characters is cut and a hash of it added, so two long ids that share
 * their beginning still give their sub-agents different ids. `hashLongIds` false gives the form
 * conversations used before the hash (recorded histories replay with it).
 */
export function subAgentIdPrefix(parentId: string, hashLongIds = true): string {
  if (parentId.length <= LONGEST_PARENT_IN_ID) return `${parentId}.sub-`;
  if (!hashLongIds) return `${parentId.slice(0, LONGEST_PARENT_IN_ID)}.sub-`;
  return `${parentId.slice(0, LONGEST_PARENT_IN_ID - 17)}~${sha256Hex(parentId).slice(0, 16)}.sub-`;
}

/** Whether a parent id is long enough to be shortened in its sub-agents' ids. */
export function shortenedInSubAgentIds(parentId: string): boolean {
  return parentId.length > LONGEST_PARENT_IN_ID;
}

/** The child conversation's id: the parent's prefix plus the tool call's, so a replayed start finds the same child. */
export function subAgentId(parentId: string, toolCallId: string, hashLongIds = true): string {
  const call = toolCallId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return `${subAgentIdPrefix(parentId, hashLongIds)}${call}`;
}

/**
 * Why a conversation may not start as it is asked to, as far as its place in a tree of sub-agents
 * goes, or undefined. `ancestors` is an option any client could send; it counts only when Temporal
 * says the run has a parent (`parent`, `root`: the ids workflowInfo gives, which no client sets)
 * that it names, and the conversation's id is one that parent gives its sub-agents. An id in the
 * form of a sub-agent's is taken only by one.
 */
export function lineageProblem(
  conversationId: string,
  ancestors: readonly string[] | undefined,
  parent: string | undefined,
  root: string | undefined,
): string | undefined {
  if (!ancestors?.length) {
    if (parent === undefined && conversationId.includes('.sub-'))
      return 'conversation ids with ".sub-" belong to sub-agents, which only their parent conversation starts';
    return undefined;
  }
  if (parent === undefined)
    return "ancestors are set by the runtime for a sub-agent's conversation, never by a client";
  if (ancestors.at(-1) !== parent)
    return `ancestors must end with the conversation that started this one (${parent})`;
  if (root !== undefined && ancestors[0] !== root)
    return `ancestors must start with the conversation at the top of the tree (${root})`;
  if (
    !conversationId.startsWith(subAgentIdPrefix(parent)) &&
    !conversationId.startsWith(subAgentIdPrefix(parent, false))
  )
    return `a sub-agent's id starts with its parent's (${subAgentIdPrefix(parent)})`;
  return undefined;
}

/** A key of the conversation's tree: the id up to its first sub-agent part (a top-level id has none). */
export function rootConversationOf(conversationId: string): string {
  const sub = conversationId.indexOf('.sub-');
  return sub < 0 ? conversationId : conversationId.slice(0, sub);
}
