import { BudgetSchema, defaultRaise, exhaustedBudget, limitsOf, raisedLimits } from '../../src/shared/budget';
import { ConversationOptionsSchema } from '../../src/shared/conversation-options';
import { ApprovalDecisionSchema } from '../../src/shared/approvals';

const START = 1_000_000;

describe('the budget option', () => {
  test('takes whole positive numbers and refuses anything else by name', () => {
    expect(BudgetSchema.parse({ tokens: 100, toolCalls: 3, deadlineMs: 90_000 })).toEqual({
      tokens: 100,
      toolCalls: 3,
      deadlineMs: 90_000,
    });
    expect(BudgetSchema.safeParse({ tokens: 0 }).success).toBe(false);
    expect(BudgetSchema.safeParse({ tokens: 1.5 }).success).toBe(false);
    expect(BudgetSchema.safeParse({ dollars: 5 }).success).toBe(false);
  });

  test('is optional in the conversation options, and absent means no budget', () => {
    expect(ConversationOptionsSchema.parse({}).budget).toBeUndefined();
    expect(ConversationOptionsSchema.parse({ budget: { tokens: 100 } }).budget).toEqual({ tokens: 100 });
  });

  test('a decision may carry a raise; one without it is read as before', () => {
    const decision = { toolCallId: 'budget-1', decision: 'allow_once', by: 'alice' } as const;
    expect(ApprovalDecisionSchema.parse(decision)).toEqual(decision);
    expect(ApprovalDecisionSchema.parse({ ...decision, raise: { tokens: 50 } }).raise).toEqual({
      tokens: 50,
    });
    expect(ApprovalDecisionSchema.safeParse({ ...decision, raise: { tokens: -1 } }).success).toBe(false);
  });
});

describe('limitsOf', () => {
  test('puts the deadline at the conversation start plus its length, and leaves absent parts unlimited', () => {
    expect(limitsOf({ tokens: 100, deadlineMs: 60_000 }, START)).toEqual({
      tokens: 100,
      deadlineAt: START + 60_000,
    });
    expect(limitsOf(undefined, START)).toEqual({});
  });
});

describe('exhaustedBudget', () => {
  const used = (tokens: number, toolCalls = 0) => ({ tokens, toolCalls });

  test('tokens: a model call may start while used tokens are below the limit, not once they reach it', () => {
    const limits = { tokens: 100 };
    expect(exhaustedBudget(limits, used(90), START, 'model_call')).toBeUndefined();
    expect(exhaustedBudget(limits, used(99), START, 'model_call')).toBeUndefined();
    expect(exhaustedBudget(limits, used(100), START, 'model_call')).toBe('tokens');
    expect(exhaustedBudget(limits, used(105), START, 'model_call')).toBe('tokens');
    // Tokens are spent by model calls: a tool call is never held for them.
    expect(exhaustedBudget(limits, used(105), START, 'tool_call')).toBeUndefined();
  });

  test('seven calls of 15 tokens fit a budget of 100; the eighth waits', () => {
    let tokens = 0;
    let calls = 0;
    while (!exhaustedBudget({ tokens: 100 }, used(tokens), START, 'model_call')) {
      tokens += 15;
      calls++;
    }
    expect(calls).toBe(7);
    expect(tokens).toBe(105);
  });

  test('tool calls: one that would pass the limit waits, the last one within it runs', () => {
    const limits = { toolCalls: 2 };
    expect(exhaustedBudget(limits, used(0, 1), START, 'tool_call')).toBeUndefined();
    expect(exhaustedBudget(limits, used(0, 2), START, 'tool_call')).toBe('toolCalls');
    expect(exhaustedBudget(limits, used(0, 2), START, 'model_call')).toBeUndefined();
  });

  test('the deadline holds at both checkpoints once passed, not at its very moment', () => {
    const limits = { deadlineAt: START + 1_000 };
    expect(exhaustedBudget(limits, used(0), START + 1_000, 'model_call')).toBeUndefined();
    expect(exhaustedBudget(limits, used(0), START + 1_001, 'model_call')).toBe('deadlineMs');
    expect(exhaustedBudget(limits, used(0), START + 1_001, 'tool_call')).toBe('deadlineMs');
  });

  test('without limits nothing is ever exhausted', () => {
    expect(exhaustedBudget({}, used(1e9, 1e9), START * 2, 'model_call')).toBeUndefined();
    expect(exhaustedBudget({}, used(1e9, 1e9), START * 2, 'tool_call')).toBeUndefined();
  });
});

describe('raisedLimits', () => {
  test('a raise counts from what was used, so overshoot is not taken out of it', () => {
    expect(raisedLimits({ tokens: 100 }, { tokens: 105, toolCalls: 0 }, START, { tokens: 50 })).toEqual({
      tokens: 155,
    });
    expect(raisedLimits({ tokens: 100 }, { tokens: 40, toolCalls: 0 }, START, { tokens: 50 })).toEqual({
      tokens: 150,
    });
    expect(raisedLimits({ toolCalls: 2 }, { tokens: 0, toolCalls: 2 }, START, { toolCalls: 3 })).toEqual({
      toolCalls: 5,
    });
  });

  test('a deadline raised after it passed counts from the decision', () => {
    const limits = { deadlineAt: START + 1_000 };
    expect(raisedLimits(limits, { tokens: 0, toolCalls: 0 }, START + 5_000, { deadlineMs: 2_000 })).toEqual({
      deadlineAt: START + 7_000,
    });
    expect(raisedLimits(limits, { tokens: 0, toolCalls: 0 }, START + 500, { deadlineMs: 2_000 })).toEqual({
      deadlineAt: START + 3_000,
    });
  });

  test('leaves the parts it does not name as they were', () => {
    const limits = { tokens: 100, toolCalls: 4, deadlineAt: START + 10 };
    expect(raisedLimits(limits, { tokens: 100, toolCalls: 1 }, START, { tokens: 20 })).toEqual({
      ...limits,
      tokens: 120,
    });
  });
});

test('an allow without an amount raises the exhausted part by the original budget for it', () => {
  const budget = { tokens: 100, toolCalls: 3, deadlineMs: 60_000 };
  expect(defaultRaise('tokens', budget)).toEqual({ tokens: 100 });
  expect(defaultRaise('toolCalls', budget)).toEqual({ toolCalls: 3 });
  expect(defaultRaise('deadlineMs', budget)).toEqual({ deadlineMs: 60_000 });
});
