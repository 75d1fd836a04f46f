import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { AgentIdSchema } from '../shared/agent-id';
import type { DailyTokenBudgets } from '../shared/daily-budget';

const AgentBudgetsFileSchema = z.record(
  AgentIdSchema,
  z.number().int('a whole number of tokens').positive('at least 1 token'),
);

/**
 * The operator's daily token budgets per agent id, across the fleet and per UTC day:
 * - AGENT_BUDGET_TOKENS_PER_DAY: tokens every agent id may spend per day (a whole number ≥ 1);
 * - AGENT_BUDGET_TOKENS_PER_DAY_FILE: a JSON file `{ "<agent id>": tokens }` giving some agent ids
 *   their own number, which wins over the default.
 * Undefined when neither is set. Throws on a malformed value, so the worker does not start.
 */
export function dailyTokenBudgetsFromEnv(env: NodeJS.ProcessEnv): DailyTokenBudgets | undefined {
  const text = env.AGENT_BUDGET_TOKENS_PER_DAY?.trim();
  const file = env.AGENT_BUDGET_TOKENS_PER_DAY_FILE?.trim();
  if (!text && !file) return undefined;
  if (text && (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text)))) {
    throw new Error(
      `AGENT_BUDGET_TOKENS_PER_DAY must be a whole number of tokens ≥ 1, not ${JSON.stringify(text)}`,
    );
  }
  return {
    ...(text ? { default: Number(text) } : {}),
    agents: file ? agentBudgetsFile(file) : {},
  };
}

function agentBudgetsFile(file: string): Record<string, number> {
  let entries: unknown;
  try {
    entries = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`AGENT_BUDGET_TOKENS_PER_DAY_FILE: cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = AgentBudgetsFileSchema.safeParse(entries);
  if (!parsed.success) {
    throw new Error(
      `AGENT_BUDGET_TOKENS_PER_DAY_FILE ${file} must map agent ids to tokens per day: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}
