import { type BudgetPause, budgetKindWords } from '../shared/budget';

/** The `approve` flag that raises each part of a budget. */
export const RAISE_FLAGS: Record<BudgetPause['kind'], string> = {
  tokens: '--raise-tokens N',
  toolCalls: '--raise-tool-calls N',
  deadlineMs: '--raise-deadline DURATION',
};

/** What ran out, in the units people read: `token budget: 105 of 100 tokens`. */
export function budgetPauseWords(pause: BudgetPause): { reached: string; defaultRaise: string } {
  const seconds = (ms: number) => `${Math.round(ms / 1000)}s`;
  const unit = pause.kind === 'tokens' ? ' tokens' : pause.kind === 'toolCalls' ? ' tool calls' : '';
  const [used, limit, raise] =
    pause.kind === 'deadlineMs'
      ? [seconds(pause.used), seconds(pause.limit), seconds(pause.defaultRaise)]
      : [String(pause.used), String(pause.limit), String(pause.defaultRaise)];
  return {
    reached: `${budgetKindWords(pause.kind)}: ${used} of ${limit}${unit}`,
    defaultRaise: `${raise}${unit} more`,
  };
}
