import { parseEvalArgs } from '../../src/cli/commands/eval';
import os from 'node:os';
import path from 'node:path';
import { parseRerunArgs, rerunWorkspace } from '../../src/cli/commands/rerun';
import { UsageError } from '../../src/cli/usage-error';
import { evalCaseResult, evalMarkdown, evalReport } from '../../src/client/eval-report';
import type { RerunReport } from '../../src/client/rerun';
import { type Rerun, canonicalArguments } from '../../src/shared/rerun';
import type { ToolCall } from '../../src/shared/messages';
import { RecordedToolResults } from '../../src/workflows/recorded-tools';

const call = (name: string, args: string): ToolCall => ({ type: 'toolCall', id: 'c', name, arguments: args });

test('arguments compare whatever the order of their keys; text that is not JSON compares as it is', () => {
  expect(canonicalArguments('{"b":1,"a":{"d":[{"y":1,"x":2}],"c":null}}')).toBe(
    '{"a":{"c":null,"d":[{"x":2,"y":1}]},"b":1}',
  );
  expect(canonicalArguments('')).toBe('{}');
  expect(canonicalArguments('{"path":')).toBe('{"path":');
});

test("a recorded result answers one matching call of the same run, once; anything else is missing, with the rerun's tools", () => {
  const rerun: Rerun = {
    of: 'conv-a',
    tools: 'recorded',
    recorded: [
      {
        run: 1,
        toolName: 'read',
        arguments: '{"path":"a"}',
        content: [{ type: 'text', text: 'A' }],
        isError: false,
      },
      {
        run: 2,
        toolName: 'read',
        arguments: '{"path":"b"}',
        content: [{ type: 'text', text: 'B' }],
        isError: false,
      },
    ],
  };
  const run1 = new RecordedToolResults(rerun, 1);
  expect(run1.answer(call('read', '{ "path": "a" }'))).toEqual({
    outcome: { content: [{ type: 'text', text: 'A' }], isError: false, status: 'ok' },
  });
  expect(run1.answer(call('read', '{"path":"a"}'))).toEqual({ missing: true, tools: 'recorded' });
  expect(run1.answer(call('read', '{"path":"b"}'))).toEqual({ missing: true, tools: 'recorded' });
  expect(run1.answer(call('write', '{"path":"a"}'))).toEqual({ missing: true, tools: 'recorded' });
  expect(new RecordedToolResults({ ...rerun, tools: 'ask' }, 2).answer(call('read', '{"path":"a"}'))).toEqual(
    {
      missing: true,
      tools: 'ask',
    },
  );
});

test('rerun and eval arguments: --tools must be known, --base-url needs their own worker', () => {
  expect(parseRerunArgs(['conv-a', '--at', '2', '--model', 'm2', '--id', 'conv-b'], '/w')).toMatchObject({
    source: { conversationId: 'conv-a' },
    fromRun: 2,
    variant: { tools: 'recorded', model: 'm2' },
    newId: 'conv-b',
    startWorker: true,
  });
  expect(parseRerunArgs(['conv-a', '--workspace', 'ws'], '/w').variant).toEqual({
    tools: 'recorded',
    workspace: '/w/ws',
  });
  expect(parseRerunArgs(['conv-a', '--no-worker']).variant).toEqual({ tools: 'recorded' });
  expect(() => parseRerunArgs(['conv-a', '--tools', 'maybe'])).toThrow(UsageError);
  expect(() => parseRerunArgs(['conv-a', '--no-worker', '--base-url', 'http://127.0.0.1:1'])).toThrow(
    "--base-url needs rerun's own worker",
  );
  expect(parseEvalArgs(['cases.json'], '/w', new Date('2026-01-02T03:04:05.678Z'))).toEqual({
    file: '/w/cases.json',
    out: '/w/eval-2026-01-02T03-04-05-678Z',
    workspace: '/w',
    startWorker: true,
    json: false,
  });
});

test("a rerun works in the --workspace given, else in the original's workspace when it is a directory here, else in the current directory", () => {
  const here = os.tmpdir();
  expect(rerunWorkspace('/given', { workspace: here }, '/cwd')).toBe('/given');
  expect(rerunWorkspace(undefined, { workspace: here }, '/cwd')).toBe(here);
  expect(rerunWorkspace(undefined, { workspace: path.join(here, `gone-${Date.now()}`) }, '/cwd')).toBe(
    '/cwd',
  );
  expect(rerunWorkspace(undefined, {}, '/cwd')).toBe('/cwd');
});

test('an eval counts changes and tokens per conversation, and a failed rerun fails its check', () => {
  const report: RerunReport = {
    conversationId: 'conv-r',
    original: 'conv-a',
    fromRun: 1,
    variant: { tools: 'recorded' },
    turns: [
      {
        run: 1,
        messages: ['hi'],
        original: { answer: 'old', toolCalls: [], tokens: { input: 10, output: 5 } },
        rerun: {
          answer: 'new',
          toolCalls: [{ name: 'read', arguments: '{}' }],
          tokens: { input: 7, output: 3 },
        },
        answerChanged: true,
        toolsChanged: true,
      },
    ],
  };
  const passed = evalCaseResult('a.json', 'conv-r', report, '^new$');
  expect(passed).toEqual({
    source: 'a.json',
    rerunId: 'conv-r',
    runs: 1,
    answersChanged: 1,
    toolsChanged: 1,
    tokensBefore: 15,
    tokensAfter: 10,
    answer: 'new',
    check: 'pass',
  });
  const failed = evalCaseResult('b.json', 'conv-s', new Error('no such history file: b.json'), 'x');
  expect(failed).toMatchObject({ check: 'fail', error: 'no such history file: b.json' });
  expect(evalReport([passed, failed, evalCaseResult('c.json', 'conv-t', report, undefined)])).toMatchObject({
    checked: 2,
    passed: 1,
    passRate: 0.5,
  });
});

test("an eval reports a rerun its model's provider refused as refused, with the provider's words, its check failed", () => {
  const refused: RerunReport = {
    conversationId: 'conv-r',
    original: 'conv-a',
    fromRun: 1,
    variant: { tools: 'recorded' },
    turns: [
      {
        run: 1,
        messages: ['hi'],
        original: { answer: 'old', toolCalls: [], tokens: { input: 10, output: 5 } },
        rerun: {
          answer: '',
          toolCalls: [],
          tokens: { input: 7, output: 1 },
          ended: "refused by the model's provider: Declined.",
          refused: true,
        },
        answerChanged: true,
        toolsChanged: false,
      },
    ],
  };
  expect(evalCaseResult('a.json', 'conv-r', refused, '.*')).toMatchObject({
    check: 'fail',
    refused: true,
    error: "refused by the model's provider: Declined.",
  });
  expect(evalMarkdown(evalReport([evalCaseResult('a.json', 'conv-r', refused, '.*')]))).toContain(
    "| fail | refused by the model's provider: Declined. |",
  );
});
