import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseExportArgs } from '../../src/cli/commands/export';
import { parseHistoryArgs } from '../../src/cli/commands/history';
import { parseReplayArgs } from '../../src/cli/commands/replay';
import { formatScheduleListing, parseScheduleArgs } from '../../src/cli/commands/schedule';
import { UsageError } from '../../src/cli/usage-error';

function usageError(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

test('history ID|FILE [--json] [--executions N] [--at N]', async () => {
  expect(parseHistoryArgs(['conv-1'])).toEqual({ source: { conversationId: 'conv-1' }, json: false });
  expect(parseHistoryArgs(['conv-1', '--json', '--executions', '2', '--at', '3'])).toEqual({
    source: { conversationId: 'conv-1' },
    json: true,
    executions: 2,
    atRun: 3,
  });
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-history-args-')), 'conv.json');
  await writeFile(file, '{}');
  expect(parseHistoryArgs([file, '--at', '1'])).toEqual({ source: { file }, json: false, atRun: 1 });
  expect(usageError(() => parseHistoryArgs([]))).toBe('history needs ID|FILE');
  expect(usageError(() => parseHistoryArgs(['conv-1', '--executions', '0']))).toMatch(
    /--executions takes a whole number/,
  );
  expect(usageError(() => parseHistoryArgs(['conv-1', '--at', 'two']))).toMatch(/--at takes a whole number/);
});

test('export ID FILE [--all-executions]', () => {
  expect(parseExportArgs(['conv-1', 'out.json'])).toEqual({
    conversationId: 'conv-1',
    file: 'out.json',
    allExecutions: false,
    json: false,
  });
  expect(parseExportArgs(['conv-1', 'out.json', '--all-executions']).allExecutions).toBe(true);
  expect(parseExportArgs(['conv-1', 'out.json', '--json']).json).toBe(true);
  expect(usageError(() => parseExportArgs(['conv-1']))).toBe('export needs FILE');
});

test('replay FILE|ID: a path that exists is a file, anything else a conversation id', async () => {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-replay-args-')), 'conv.json');
  await writeFile(file, '{}');
  expect(parseReplayArgs([file])).toEqual({ source: { file }, json: false });
  expect(parseReplayArgs(['conv-1', '--json', '--executions', '1'])).toEqual({
    source: { conversationId: 'conv-1' },
    json: true,
    executions: 1,
  });
  expect(() => parseReplayArgs(['missing/history.json'])).toThrow(
    'no such history file: missing/history.json',
  );
  expect(usageError(() => parseReplayArgs([]))).toBe('replay needs FILE|ID');
});

describe('schedule', () => {
  test('a prompt with --cron, an id and conversation flags', () => {
    expect(
      parseScheduleArgs([
        'Summarise',
        'the',
        'news',
        '--cron',
        '0 9 * * 1-5',
        '--id',
        'daily',
        '--approval',
        'auto',
        '--idle-timeout',
        '2h',
      ]),
    ).toEqual({
      action: 'create',
      prompt: 'Summarise the news',
      cron: '0 9 * * 1-5',
      scheduleId: 'daily',
      options: { approval: { mode: 'auto' }, idleTimeoutMs: 7_200_000 },
      json: false,
    });
  });

  test('list, delete and trigger', () => {
    expect(parseScheduleArgs(['list', '--json'])).toEqual({ action: 'list', json: true });
    expect(parseScheduleArgs(['delete', 'daily'])).toEqual({
      action: 'delete',
      scheduleId: 'daily',
      json: false,
    });
    expect(parseScheduleArgs(['trigger', 'daily'])).toEqual({
      action: 'trigger',
      scheduleId: 'daily',
      json: false,
    });
  });

  test('usage errors say what is missing or misplaced', () => {
    expect(usageError(() => parseScheduleArgs(['Hello']))).toMatch(/needs --cron/);
    expect(usageError(() => parseScheduleArgs(['--cron', '* * * * *']))).toMatch(/needs a prompt/);
    expect(usageError(() => parseScheduleArgs(['delete']))).toBe('schedule delete needs SCHEDULE_ID');
    expect(usageError(() => parseScheduleArgs(['list', '--cron', '* * * * *']))).toBe(
      'schedule list takes no --cron',
    );
    expect(
      usageError(() => parseScheduleArgs(['Hi', '--cron', '* * * * *', '--idle-timeout', 'soon'])),
    ).toMatch(/--idle-timeout takes a duration/);
    expect(usageError(() => parseScheduleArgs(['Hi', '--cron', '* * * * *', '--id', 'bad id']))).toMatch(
      /invalid conversation id/,
    );
  });
});

test('schedule list shows each schedule on one line: id, cron, next start, latest conversation, prompt', () => {
  expect(
    formatScheduleListing({
      scheduleId: 'daily',
      cron: '0 9 * * *',
      prompt: 'Summarise the news',
      paused: false,
      nextStartAt: new Date('2026-01-05T09:00:00Z'),
      recentConversations: ['daily-2026-01-03T09:00:00Z', 'daily-2026-01-04T09:00:00Z'],
    }),
  ).toBe(
    'daily  cron "0 9 * * *"  next 2026-01-05T09:00:00.000Z  latest daily-2026-01-04T09:00:00Z  "Summarise the news"',
  );
  expect(formatScheduleListing({ scheduleId: 'quiet', paused: true, recentConversations: [] })).toBe(
    'quiet  paused',
  );
});
