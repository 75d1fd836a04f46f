import { z } from 'zod';

/**
 * The memo field in which a conversation keeps what it has spent, updated as each run finishes, so
 * lists read from Temporal visibility show it for every conversation, ended ones included, without
 * asking any workflow. A memo rather than search attributes: it needs no registration, and takes
 * none of the few integer attributes a namespace on SQL visibility has.
 */
export const SPENT_MEMO = 'durableAgentSpent';

/** Read from memos workers write: not strict, so a list read by an older client ignores fields a newer worker adds. */
export const ConversationSpentSchema = z.object({
  /** Runs so far: one per user message or batch of them. */
  runs: z.number().int().nonnegative(),
  /** Tokens the endpoint reported, its compactions' and sub-agents' included. */
  tokens: z.number().int().nonnegative(),
  /** Tool calls run. */
  toolCalls: z.number().int().nonnegative(),
  /** Of `tokens`, input read from the provider's prompt cache; absent when no call reported it. */
  cachedInputTokens: z.number().int().nonnegative().optional(),
  /** US dollars by the worker's price table; absent when no call was priced. */
  usd: z.number().nonnegative().optional(),
});
export type ConversationSpent = z.infer<typeof ConversationSpentSchema>;

/** What a visibility listing's memo says was spent, when it says so in this shape. */
export function spentOf(memo: Record<string, unknown> | undefined): ConversationSpent | undefined {
  const parsed = ConversationSpentSchema.safeParse(memo?.[SPENT_MEMO]);
  return parsed.success ? parsed.data : undefined;
}
