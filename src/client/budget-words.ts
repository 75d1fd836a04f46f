import { type BudgetPause, type BudgetPauseKind, budgetKindWords, isBudgetPauseId } from '../shared/budget';
import type { AgentEvent } from '../shared/events';
import { oneLine } from '../shared/one-line';

/** An amount of a part of the budget as people read it: `105 tokens`, `3 tool calls`, `95s`. */
function amountWords(kind: BudgetPauseKind, amount: number): string {
  switch (kind) {
    case 'tokens':
    case 'dailyTokens':
      return `${amount} tokens`;
    case 'toolCalls':
      return `${amount} tool calls`;
    case 'deadlineMs':
      return `${Math.round(amount / 1000)}s`;
    case 'usd':
      return usdWords(amount);
  }
}

/** Dollars as people read them: cents for amounts of a dollar or more, four places below that (`$0.0123`). */
export function usdWords(amount: number): string {
  return `$${amount >= 1 ? amount.toFixed(2) : amount.toFixed(4)}`;
}

/** What ran out (`token budget: 105 of 100 tokens`) and what an allow with no amount adds (`100 tokens more`). */
export function budgetPauseWords(pause: BudgetPause): { reached: string; defaultRaise: string } {
  if (pause.kind === 'dailyTokens') {
    return {
      reached: `${pause.agentId ? `agent ${pause.agentId}'s` : "agent's"} daily token budget: ${pause.used} of ${amountWords(pause.kind, pause.limit)} today`,
      defaultRaise: 'nothing (only the worker operator raises a daily budget)',
    };
  }
  const limit = amountWords(pause.kind, pause.limit);
  const used =
    pause.kind === 'deadlineMs' || pause.kind === 'usd'
      ? amountWords(pause.kind, pause.used)
      : String(pause.used);
  return {
    reached: `${budgetKindWords(pause.kind)}: ${used} of ${limit}`,
    defaultRaise: `${amountWords(pause.kind, pause.defaultRaise)} more`,
  };
}

/** The pause an `approval_requested` event asks about, when it is a budget pause (its arguments are the pause). */
export function budgetPauseOf(
  event: Extract<AgentEvent, { type: 'approval_requested' }>,
): BudgetPause | undefined {
  if (!isBudgetPauseId(event.toolCallId)) return undefined;
  try {
    const pause = JSON.parse(event.args) as Partial<BudgetPause>;
    return typeof pause.kind === 'string' && typeof pause.used === 'number' && typeof pause.limit === 'number'
      ? (pause as BudgetPause)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Why a run stopped at its budget, and who stopped it. */
export function budgetExhaustedWords(event: Extract<AgentEvent, { type: 'budget_exhausted' }>): string {
  const amount =
    event.budget === 'dailyTokens'
      ? `${event.used} of ${amountWords(event.budget, event.limit)} used today by the agent`
      : event.budget === 'deadlineMs'
        ? `${amountWords(event.budget, event.used)} of ${amountWords(event.budget, event.limit)} since the conversation started`
        : event.budget === 'usd'
          ? `${amountWords(event.budget, event.used)} of ${amountWords(event.budget, event.limit)} used`
          : `${event.used} of ${amountWords(event.budget, event.limit)} used`;
  const by = event.by === 'timeout' ? 'nobody decided in time' : `stopped by ${event.by}`;
  return `run stopped: ${budgetKindWords(event.budget)} exhausted (${amount}); ${by}${event.reason ? `: ${oneLine(event.reason, 120)}` : ''}`;
}

/**
 * How a run paused at its agent's daily budget goes on: by itself when the next UTC day begins, or
 * stopped by a reject; an allow cannot raise the operator's cap.
 */
export function dailyBudgetPauseWords(pause: BudgetPause): string {
  const at = pause.resumesAt !== undefined ? ` at ${new Date(pause.resumesAt).toISOString()}` : '';
  return `it goes on by itself${at} (the next UTC day), rejecting stops the run; only the worker's operator raises the cap (AGENT_BUDGET_TOKENS_PER_DAY)`;
}
