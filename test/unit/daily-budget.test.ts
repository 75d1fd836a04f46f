import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { summaryResultOf } from '../../src/shared/compaction';
import {
  agentDailyBudgetWorkflowId,
  dailyTokensFor,
  nextUtcDayStartMs,
  utcDayOf,
} from '../../src/shared/daily-budget';
import { dailyTokenBudgetsFromEnv } from '../../src/worker/daily-budget-settings';

describe('the UTC day', () => {
  test('a day runs from midnight UTC to the last millisecond before the next, whatever the local zone', () => {
    expect(utcDayOf(Date.parse('2026-11-26T00:00:00.000Z'))).toBe('2026-11-26');
    expect(utcDayOf(Date.parse('2026-11-26T23:59:59.999Z'))).toBe('2026-11-26');
    expect(utcDayOf(Date.parse('2026-11-27T00:00:00.000Z'))).toBe('2026-11-27');
    expect(utcDayOf(Date.parse('2026-11-26T23:30:00-05:00'))).toBe('2026-11-27');
  });

  test('the next day begins at the next midnight UTC, across months, years and leap days', () => {
    const next = (instant: string) => new Date(nextUtcDayStartMs(Date.parse(instant))).toISOString();
    expect(next('2026-11-26T17:42:23.000Z')).toBe('2026-11-27T00:00:00.000Z');
    expect(next('2026-11-26T00:00:00.000Z')).toBe('2026-11-27T00:00:00.000Z');
    expect(next('2026-11-26T23:59:59.999Z')).toBe('2026-11-27T00:00:00.000Z');
    expect(next('2026-12-31T12:00:00.000Z')).toBe('2027-01-01T00:00:00.000Z');
    expect(next('2028-02-28T08:00:00.000Z')).toBe('2028-02-29T00:00:00.000Z');
  });

  test('each agent and day has its own ledger', () => {
    expect(agentDailyBudgetWorkflowId('research', '2026-11-26')).toBe(
      'agent-daily-budget:research:2026-11-26',
    );
  });
});

describe('AGENT_BUDGET_TOKENS_PER_DAY', () => {
  test('unset, no agent has a daily budget', () => {
    expect(dailyTokenBudgetsFromEnv({})).toBeUndefined();
    expect(dailyTokensFor(undefined, 'research')).toBeUndefined();
  });

  test('a number holds every agent id; the file gives some their own', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'daily-budget-'));
    const file = path.join(dir, 'budgets.json');
    await writeFile(file, JSON.stringify({ research: 500_000, 'cheap-bot': 1_000 }));
    const budgets = dailyTokenBudgetsFromEnv({
      AGENT_BUDGET_TOKENS_PER_DAY: '100000',
      AGENT_BUDGET_TOKENS_PER_DAY_FILE: file,
    });
    expect(dailyTokensFor(budgets, 'research')).toBe(500_000);
    expect(dailyTokensFor(budgets, 'cheap-bot')).toBe(1_000);
    expect(dailyTokensFor(budgets, 'default')).toBe(100_000);
    // With the file alone, only the agents it names are held.
    const named = dailyTokenBudgetsFromEnv({ AGENT_BUDGET_TOKENS_PER_DAY_FILE: file });
    expect(dailyTokensFor(named, 'research')).toBe(500_000);
    expect(dailyTokensFor(named, 'default')).toBeUndefined();
  });

  test.each(['0', '-5', '1.5', '100k', '1e6', '99999999999999999999'])(
    'refuses %s, naming the setting',
    (value) => {
      expect(() => dailyTokenBudgetsFromEnv({ AGENT_BUDGET_TOKENS_PER_DAY: value })).toThrow(
        `AGENT_BUDGET_TOKENS_PER_DAY must be a whole number of tokens ≥ 1, not "${value}"`,
      );
    },
  );

  test.each([
    ['not JSON', '{ research: 5 }', /cannot read/],
    ['an array', '[1000]', /must map agent ids to tokens per day/],
    ['a fraction', '{ "research": 0.5 }', /whole number of tokens[\s\S]*research/],
    ['zero', '{ "research": 0 }', /at least 1 token/],
    ['an agent id that cannot be one', '{ "../etc": 10 }', /Invalid key in record[\s\S]*\.\.\/etc/],
  ])('refuses a file holding %s', async (_what, text, message) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'daily-budget-'));
    const file = path.join(dir, 'budgets.json');
    await writeFile(file, text);
    expect(() => dailyTokenBudgetsFromEnv({ AGENT_BUDGET_TOKENS_PER_DAY_FILE: file })).toThrow(message);
  });

  test('refuses a file that is not there', () => {
    expect(() =>
      dailyTokenBudgetsFromEnv({ AGENT_BUDGET_TOKENS_PER_DAY_FILE: '/nonexistent/budgets.json' }),
    ).toThrow(/AGENT_BUDGET_TOKENS_PER_DAY_FILE: cannot read \/nonexistent\/budgets.json/);
  });
});

test('a summary answered as plain text (recorded histories, older workers) or with its usage reads the same', () => {
  expect(summaryResultOf('the gist')).toEqual({ summary: 'the gist' });
  const usage = { inputTokens: 10, outputTokens: 5 };
  expect(summaryResultOf({ summary: 'the gist', usage })).toEqual({ summary: 'the gist', usage });
});
