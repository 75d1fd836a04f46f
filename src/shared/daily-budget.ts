import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import { AgentIdSchema } from './agent-id';

/** The workflow type of the daily ledger entity; one execution per agent id and UTC day. */
export const AGENT_DAILY_BUDGET_WORKFLOW_TYPE = 'agentDailyBudget';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day an instant falls in, as `YYYY-MM-DD`. */
export function utcDayOf(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** When the UTC day after the one `epochMs` falls in begins (epoch ms). */
export function nextUtcDayStartMs(epochMs: number): number {
  return (Math.floor(epochMs / DAY_MS) + 1) * DAY_MS;
}

/** The ledger's workflow id: one per agent and UTC day, so every worker of the fleet finds the same one. */
export function agentDailyBudgetWorkflowId(agentId: string, day: string): string {
  return `agent-daily-budget:${agentId}:${day}`;
}

/**
 * The operator's daily token budgets: `default` for every agent id, `agents` for some by name (an
 * entry wins over the default). Tokens are input plus output as the endpoint reports them.
 */
export const DailyTokenBudgetsSchema = z.strictObject({
  /** Tokens a day for each agent id without an entry; no limit when absent. */
  default: z.number().int().positive().optional(),
  /** Tokens a day by agent id. */
  agents: z.record(AgentIdSchema, z.number().int().positive()),
});
export type DailyTokenBudgets = z.infer<typeof DailyTokenBudgetsSchema>;

/** The tokens an agent may spend per UTC day across the fleet, or undefined when it has no daily budget. */
export function dailyTokensFor(budgets: DailyTokenBudgets | undefined, agentId: string): number | undefined {
  return budgets?.agents[agentId] ?? budgets?.default;
}

/**
 * Spends tokens of the ledger's day (0 only reads it). `key` names one model call (its workflow,
 * run and activity): a report that arrives twice (an activity retried after it reported) counts once.
 */
export const DailySpendSchema = z.strictObject({
  tokens: z.number().int().min(0),
  key: z.string().min(1).max(1_000).optional(),
});
export type DailySpend = z.infer<typeof DailySpendSchema>;

/** What the agent has spent on the ledger's day, after the spend. */
export interface DailySpent {
  /** The agent. */
  agentId: string;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  /** Tokens the agent has spent that day. */
  tokens: number;
}

/** Update-with-start: the first worker to report or read starts the ledger. */
export const spendDailyTokensUpdate = defineUpdate<DailySpent, [DailySpend]>('spendDailyTokens');
/** What the agent has spent on the ledger's day (`temporal workflow query --name status`). */
export const agentDailyBudgetStatusQuery = defineQuery<DailySpent>('status');

export interface AgentDailyBudgetInput {
  agentId: string;
  day: string;
  /** What the previous run of the same day handed over. */
  carried?: { tokens: number; recentKeys: string[] };
  /**
   * Continues as new once a run's history has this many events, besides whenever Temporal suggests
   * it (the only reason when absent, as a model call starts it); handed on to the next run. Whoever
   * starts the ledger first may set it (a test, to see a hand-over without thousands of calls).
   */
  maxHistoryEvents?: number;
}

/**
 * What a model call answers instead of calling the model when the agent's day is spent: the run
 * waits for the next UTC day or a person's reject.
 */
export interface DailyBudgetSpent {
  dailyBudgetSpent: {
    agentId: string;
    day: string;
    used: number;
    limit: number;
    /**
     * How long until the next UTC day begins by the clock of the worker that checked: a span, not
     * an instant, so the workflow's timer does not depend on how far that clock is from the server's.
     */
    nextDayInMs: number;
  };
}

export function isDailyBudgetSpent(result: unknown): result is DailyBudgetSpent {
  return typeof result === 'object' && result !== null && 'dailyBudgetSpent' in result;
}
