import type { Budget, BudgetKind, BudgetLimits, BudgetUsage } from '../shared/budget';

/** What the sub-agents a conversation has running hold of its budget: the sum of their shares. */
export interface Reserved {
  tokens: number;
  toolCalls: number;
  usd: number;
}

export const NOTHING_RESERVED: Reserved = { tokens: 0, toolCalls: 0, usd: 0 };

/**
 * A sub-agent's budget, drawn from what its parent has left. A sub-agent's spending reaches its
 * parent only when it ends, so while it runs it holds a share: in each unit the parent's budget has,
 * what is left (the limit less what is spent and what running sub-agents hold) split between the
 * `ways` sub-agents the turn is starting, so that however many run at once their shares together
 * never pass the parent's limit. Tokens and tool calls are whole numbers, rounded down; the
 * deadline is not used up by spending, so each gets all the time to the parent's. Returns the unit
 * that has nothing left for one more sub-agent instead, when one has not.
 */
export function subAgentShare(
  limits: BudgetLimits,
  used: BudgetUsage,
  reserved: Reserved,
  now: number,
  ways: number,
): Budget | BudgetKind {
  const share: Budget = {};
  if (limits.tokens !== undefined) {
    const tokens = Math.floor((limits.tokens - used.tokens - reserved.tokens) / ways);
    if (tokens < 1) return 'tokens';
    share.tokens = tokens;
  }
  if (limits.toolCalls !== undefined) {
    const toolCalls = Math.floor((limits.toolCalls - used.toolCalls - reserved.toolCalls) / ways);
    if (toolCalls < 1) return 'toolCalls';
    share.toolCalls = toolCalls;
  }
  if (limits.usd !== undefined) {
    const usd = (limits.usd - (used.usd ?? 0) - reserved.usd) / ways;
    if (!(usd > 0)) return 'usd';
    share.usd = usd;
  }
  if (limits.deadlineAt !== undefined) {
    const deadlineMs = Math.floor(limits.deadlineAt - now);
    if (deadlineMs < 1) return 'deadlineMs';
    share.deadlineMs = deadlineMs;
  }
  return share;
}

/** `reserved` with `share` added (`sign` 1) or given back (`sign` -1). */
export function withShare(reserved: Reserved, share: Budget, sign: 1 | -1): Reserved {
  return {
    tokens: reserved.tokens + sign * (share.tokens ?? 0),
    toolCalls: reserved.toolCalls + sign * (share.toolCalls ?? 0),
    usd: reserved.usd + sign * (share.usd ?? 0),
  };
}
