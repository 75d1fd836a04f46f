import type { BudgetKind } from '../shared/budget';

/** The `approve` flag that raises each part of a budget. */
export const RAISE_FLAGS: Record<BudgetKind, string> = {
  tokens: '--raise-tokens N',
  toolCalls: '--raise-tool-calls N',
  deadlineMs: '--raise-deadline DURATION',
  usd: '--raise-usd AMOUNT',
};
