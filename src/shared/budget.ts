import { z } from 'zod';
import type { Usage } from './messages';

const positiveWhole = (what: string) => z.number().int().positive(`${what} is a whole number of at least 1`);

/**
 * A conversation's budget: what its runs may spend before a person decides whether they go on.
 * Each part is optional; a conversation without one spends freely, as before budgets existed.
 */
export const BudgetSchema = z.strictObject({
  /** Tokens (input plus output, as the endpoint reports them) across the conversation's model calls. */
  tokens: positiveWhole('budget.tokens').optional(),
  /** Tool calls that run (after any approval) across the conversation. */
  toolCalls: positiveWhole('budget.toolCalls').optional(),
  /** Milliseconds of workflow time from the conversation's start. */
  deadlineMs: positiveWhole('budget.deadlineMs').optional(),
  /** US dollars across the conversation's model calls, priced by the worker's price table (AGENT_MODEL_PRICES). */
  usd: z.number().positive('budget.usd is more than 0').finite().optional(),
});
export type Budget = z.infer<typeof BudgetSchema>;

/** What a budget decision raises, in the units of the budget (tokens, tool calls, ms). */
export const BudgetRaiseSchema = BudgetSchema;
export type BudgetRaise = Budget;

/**
 * The parts of a budget: `tokens`, `toolCalls`, `deadlineMs` and `usd`.
 *
 * @useDeclaredType
 */
export type BudgetKind = keyof Budget;
export const BUDGET_KINDS: readonly BudgetKind[] = ['tokens', 'toolCalls', 'deadlineMs', 'usd'];

/**
 * What a run may pause at: a part of the conversation's budget, or `dailyTokens`, its agent's
 * tokens for the UTC day across the fleet (the worker operator's cap, which no decision raises).
 */
export type BudgetPauseKind = BudgetKind | 'dailyTokens';
export const BUDGET_PAUSE_KINDS: readonly BudgetPauseKind[] = [...BUDGET_KINDS, 'dailyTokens'];

/** The id a budget pause is asked under: `budget-N`, N counting the conversation's pauses. */
export const BUDGET_PAUSE_PREFIX = 'budget-';
/** Whether a decision's tool call id names a budget pause (as the workflow numbers them). */
export function isBudgetPauseId(toolCallId: string): boolean {
  return new RegExp(`^${BUDGET_PAUSE_PREFIX}\\d+$`).test(toolCallId);
}

/** The tool name a budget pause shows under, in pending approvals and approval events. */
export const BUDGET_PAUSE_TOOL = 'budget';

/** The limits now in force: the options' budget, raised by decisions; the deadline as a workflow time. */
/** A budget's limits in force; an absent part is unlimited. */
export interface BudgetLimits {
  /** Tokens across the conversation. */
  tokens?: number;
  /** Tool calls across the conversation. */
  toolCalls?: number;
  /** Workflow time (ms since the epoch) after which the conversation's runs pause. */
  deadlineAt?: number;
  /** US dollars across the conversation. */
  usd?: number;
}

/** What the conversation has spent. */
export interface BudgetUsage {
  /** Tokens, input plus output, as the endpoint reported them. */
  tokens: number;
  /** Tool calls run. */
  toolCalls: number;
  /** Of `tokens`, input the provider read from its prompt cache; absent until a call reports it. */
  cachedInputTokens?: number;
  /** Of `tokens`, output the model spent reasoning; absent until a call reports it. */
  reasoningTokens?: number;
  /** US dollars, by the worker's price table; absent until a call is priced. */
  usd?: number;
}

/** What a model call (or a sub-agent, or a compaction) spent, as a conversation counts it. */
export type Spent = Omit<BudgetUsage, 'toolCalls'>;

/** A model call's usage as the conversation counts it. */
export function spentOf(usage: Usage): Spent {
  return {
    tokens: usage.inputTokens + usage.outputTokens,
    ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}),
    ...(usage.reasoningTokens !== undefined ? { reasoningTokens: usage.reasoningTokens } : {}),
    ...(usage.costUsd !== undefined ? { usd: usage.costUsd } : {}),
  };
}

/** Adds `spent` to `usage` in place; a part `spent` lacks stays as it was (absent stays absent). */
export function addSpent(usage: BudgetUsage, spent: Spent): void {
  usage.tokens += spent.tokens;
  if (spent.cachedInputTokens !== undefined)
    usage.cachedInputTokens = (usage.cachedInputTokens ?? 0) + spent.cachedInputTokens;
  if (spent.reasoningTokens !== undefined)
    usage.reasoningTokens = (usage.reasoningTokens ?? 0) + spent.reasoningTokens;
  if (spent.usd !== undefined) usage.usd = (usage.usd ?? 0) + spent.usd;
}

/** Where a run may pause: before a model call, or before a tool call runs (which would count one). */
export type BudgetCheckpoint = 'model_call' | 'tool_call';

export function limitsOf(budget: Budget | undefined, startedAt: number): BudgetLimits {
  return {
    ...(budget?.tokens !== undefined ? { tokens: budget.tokens } : {}),
    ...(budget?.toolCalls !== undefined ? { toolCalls: budget.toolCalls } : {}),
    ...(budget?.deadlineMs !== undefined ? { deadlineAt: startedAt + budget.deadlineMs } : {}),
    ...(budget?.usd !== undefined ? { usd: budget.usd } : {}),
  };
}

/**
 * The part of the budget a run would pass at `checkpoint`, or undefined when it may go on: tokens
 * once used reach the limit (checked before a model call, whose cost is known only after it), tool
 * calls when one more would pass the limit, the deadline once `now` is past it (at either checkpoint).
 */
export function exhaustedBudget(
  limits: BudgetLimits,
  usage: BudgetUsage,
  now: number,
  checkpoint: BudgetCheckpoint,
): BudgetKind | undefined {
  if (limits.deadlineAt !== undefined && now > limits.deadlineAt) return 'deadlineMs';
  if (checkpoint === 'model_call' && limits.tokens !== undefined && usage.tokens >= limits.tokens)
    return 'tokens';
  if (checkpoint === 'model_call' && limits.usd !== undefined && (usage.usd ?? 0) >= limits.usd) return 'usd';
  if (checkpoint === 'tool_call' && limits.toolCalls !== undefined && usage.toolCalls + 1 > limits.toolCalls)
    return 'toolCalls';
  return undefined;
}

/**
 * The limits after a raise. A raise gives that much more from where the conversation stands, not
 * from the old limit: the tokens a model call used past the limit, or the time a person took to
 * decide after the deadline, are not taken out of it.
 */
export function raisedLimits(
  limits: BudgetLimits,
  usage: BudgetUsage,
  now: number,
  raise: BudgetRaise,
): BudgetLimits {
  const raised = { ...limits };
  if (raise.tokens !== undefined) raised.tokens = Math.max(limits.tokens ?? 0, usage.tokens) + raise.tokens;
  if (raise.toolCalls !== undefined)
    raised.toolCalls = Math.max(limits.toolCalls ?? 0, usage.toolCalls) + raise.toolCalls;
  if (raise.usd !== undefined) raised.usd = Math.max(limits.usd ?? 0, usage.usd ?? 0) + raise.usd;
  if (raise.deadlineMs !== undefined)
    raised.deadlineAt = Math.max(limits.deadlineAt ?? now, now) + raise.deadlineMs;
  return raised;
}

/** An allow that names no amount raises the exhausted part by as much as the conversation was given at first. */
export function defaultRaise(kind: BudgetKind, budget: Budget): BudgetRaise {
  return { [kind]: budget[kind]! };
}

/** A pause as a pending approval shows it: which part ran out, how much is used of how much, and what allowing raises. */
export interface BudgetPause {
  /** The part that ran out. */
  kind: BudgetPauseKind;
  /** Tokens, tool calls, or ms since the conversation's start (for `dailyTokens`: the agent's tokens today). */
  used: number;
  /** What the budget allows of it. */
  limit: number;
  /** What an allow without `raise` adds; 0 for `dailyTokens`, which only a reject answers. */
  defaultRaise: number;
  /** For `dailyTokens`: whose day is spent. */
  agentId?: string;
  /** For `dailyTokens`: when the run goes on by itself (epoch ms, the next UTC day). */
  resumesAt?: number;
}

/** The pause as the pending approval's arguments text (what its hash is over). */
export function budgetPauseArguments(pause: BudgetPause): string {
  return JSON.stringify(pause);
}

/** The words for a part of the budget, in messages people read. */
export function budgetKindWords(kind: BudgetPauseKind): string {
  switch (kind) {
    case 'dailyTokens':
      return "agent's daily token budget";
    case 'tokens':
      return 'token budget';
    case 'toolCalls':
      return 'tool-call budget';
    case 'deadlineMs':
      return 'deadline';
    case 'usd':
      return 'cost budget';
  }
}

/** What a conversation's status shows of its budget and spending. */
export interface BudgetStatus {
  /** Spent across the conversation (every run, across continue-as-new). */
  used: BudgetUsage;
  /** Spent by the latest run (the one in progress, or the last one). */
  run: BudgetUsage & {
    /** The run's number. */
    run: number;
  };
  /** The limits in force (after raises); absent parts are unlimited. */
  limits: BudgetLimits;
  /** Workflow time the conversation started at, which the deadline counts from. */
  startedAt: number;
  /** The agent's daily token budget across the fleet, as the worker that admitted this execution set it. */
  daily?: {
    /** The conversation's agent. */
    agentId: string;
    /** Tokens a day the agent may spend. */
    tokensPerDay: number;
  };
}
