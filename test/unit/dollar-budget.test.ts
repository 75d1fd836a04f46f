import { BudgetSchema, exhaustedBudget, raisedLimits } from '../../src/shared/budget';
import { ConversationOptionsSchema } from '../../src/shared/conversation-options';
import { costOf, priceOf } from '../../src/shared/model-prices';

const START = 1_000_000;

describe('a budget in US dollars', () => {
  test('is a finite amount above 0: 0, a negative amount and infinity are refused by name', () => {
    expect(BudgetSchema.parse({ usd: 0.5 })).toEqual({ usd: 0.5 });
    for (const usd of [0, -1, Number.POSITIVE_INFINITY]) {
      const parsed = BudgetSchema.safeParse({ usd });
      expect(parsed.success).toBe(false);
      expect(JSON.stringify(parsed.error?.issues)).toContain('usd');
    }
  });

  test('pauses the next model call once what was spent reaches it exactly, not a cent before', () => {
    const limits = { usd: 0.02 };
    const spent = (usd: number) => ({ tokens: 0, toolCalls: 0, usd });
    expect(exhaustedBudget(limits, spent(0.019), START, 'model_call')).toBeUndefined();
    expect(exhaustedBudget(limits, spent(0.02), START, 'model_call')).toBe('usd');
    expect(exhaustedBudget(limits, spent(0.03), START, 'model_call')).toBe('usd');
    // Dollars are spent by model calls: a tool call is never held for them.
    expect(exhaustedBudget(limits, spent(0.03), START, 'tool_call')).toBeUndefined();
  });

  test('a raise counts from what was spent when a call went past the limit, from the limit otherwise', () => {
    const raise = (spent: number) =>
      raisedLimits({ usd: 0.02 }, { tokens: 0, toolCalls: 0, usd: spent }, START, { usd: 0.05 }).usd;
    expect(raise(0.035)).toBeCloseTo(0.085, 10);
    expect(raise(0.01)).toBeCloseTo(0.07, 10);
  });
});

test("a conversation's modelRetryMs is at least 10 s", () => {
  expect(ConversationOptionsSchema.parse({ modelRetryMs: 10_000 }).modelRetryMs).toBe(10_000);
  const parsed = ConversationOptionsSchema.safeParse({ modelRetryMs: 9_999 });
  expect(parsed.success).toBe(false);
  expect(parsed.error?.issues[0]?.path).toEqual(['modelRetryMs']);
});

describe('the price table', () => {
  test('the longest matching prefix wins, whatever order the table lists them in', () => {
    const shortFirst = {
      'claude-*': { input: 1, output: 5 },
      'claude-sonnet-*': { input: 2, output: 10 },
      'claude-sonnet-4*': { input: 3, output: 15 },
    };
    expect(priceOf(shortFirst, 'claude-sonnet-4-6')).toBe(shortFirst['claude-sonnet-4*']);
    expect(priceOf(shortFirst, 'claude-sonnet-3-7')).toBe(shortFirst['claude-sonnet-*']);
    expect(priceOf(shortFirst, 'claude-haiku-4-5')).toBe(shortFirst['claude-*']);
  });

  test('cached input without a price of its own costs what other input costs', () => {
    const usage = { inputTokens: 1_000_000, cachedInputTokens: 600_000, outputTokens: 0 };
    expect(costOf(usage, { input: 2, output: 8 })).toBeCloseTo(2, 10);
    expect(costOf(usage, { input: 2, cachedInput: 0.5, output: 8 })).toBeCloseTo(0.8 + 0.3, 10);
  });
});
