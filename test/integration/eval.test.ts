import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EvalReport } from '../../src/client/eval-report';
import { assertCliBuilt, runCli } from '../support/cli-process';
import type { ChatRequest, ScriptStep } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

// `eval` over three exported histories: each conversation rerun against another model, a report
// written as JSON and markdown, a failing check counted.

const firstUserText = (request: ChatRequest) =>
  String(request.messages.find((message) => message.role === 'user')?.content ?? '');

/** A model that answers `<prefix> <the first user message>`, asking for `exec` first when that message says so. */
function answering(prefix: string, count: number): ScriptStep[] {
  return Array.from({ length: count }, () => (request: ChatRequest) => {
    const last = request.messages.at(-1);
    if (last?.role === 'user' && firstUserText(request).includes('run')) {
      return { toolCalls: [{ name: 'exec', arguments: { command: 'echo ran >> ran.log' } }] };
    }
    return { text: `${prefix} ${firstUserText(request)}` };
  });
}

let original: ScriptedModelServer;
let variant: ScriptedModelServer;
let harness: TestHarness;
let directory: string;
const env = () => ({ ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS });

beforeAll(async () => {
  assertCliBuilt();
  original = await startScriptedModelServer(answering('Old:', 4));
  variant = await startScriptedModelServer(answering('New:', 4));
  harness = await startHarness({ modelBaseUrl: original.baseUrl });
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-eval-'));
  const prompts = ['hello', 'please run it', 'goodbye'];
  for (const [index, prompt] of prompts.entries()) {
    const id = `conv-${randomUUID()}`;
    await harness.agent.send(id, prompt, {
      options: { workspace: harness.workspace, approval: { mode: 'auto' } },
    });
    await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished', (event) => event.run === 1);
    const exported = await runCli(['export', id, path.join(directory, `conv-${index + 1}.json`)], env());
    expect(exported.code).toBe(0);
  }
});

afterAll(async () => {
  await harness?.close();
  await original?.close();
  await variant?.close();
});

test('eval FILE reruns each history with the variant, writes report.json and report.md, and counts a failing check', async () => {
  const evalFile = path.join(directory, 'eval.json');
  await writeFile(
    evalFile,
    JSON.stringify({
      variant: { baseUrl: variant.baseUrl, tools: 'recorded' },
      conversations: [
        { source: 'conv-1.json', check: '^New: hello$' },
        { source: 'conv-2.json', check: 'New: please' },
        { source: 'conv-3.json', check: 'Old:' },
      ],
      concurrency: 3,
    }),
  );
  const out = path.join(directory, 'report');
  const result = await runCli(['eval', evalFile, '--out', out, '--workspace', harness.workspace], env());
  expect(result.code).toBe(1);
  const report = JSON.parse(await readFile(path.join(out, 'report.json'), 'utf8')) as EvalReport;
  expect(report).toMatchObject({ checked: 3, passed: 2, passRate: 2 / 3 });
  expect(report.cases.map((entry) => [path.basename(entry.source), entry.answer, entry.check])).toEqual([
    ['conv-1.json', 'New: hello', 'pass'],
    ['conv-2.json', 'New: please run it', 'pass'],
    ['conv-3.json', 'New: goodbye', 'fail'],
  ]);
  expect(report.cases.every((entry) => entry.answersChanged === 1 && entry.toolsChanged === 0)).toBe(true);
  expect(report.cases.every((entry) => entry.tokensBefore > 0 && entry.tokensAfter > 0)).toBe(true);
  // The command ran once, in the original; the rerun was served its recorded result.
  expect(await readFile(path.join(harness.workspace, 'ran.log'), 'utf8')).toBe('ran\n');
  const markdown = await readFile(path.join(out, 'report.md'), 'utf8');
  expect(markdown).toContain('| conversation | rerun | runs | answers changed |');
  expect(markdown).toContain('2 of 3 checks passed (67%)');
  expect(result.stdout).toBe(markdown);
});

test('an eval file that is not valid is refused, saying what is wrong', async () => {
  const evalFile = path.join(directory, 'bad.json');
  await writeFile(evalFile, JSON.stringify({ conversations: [{ source: 'x.json', chek: 'typo' }] }));
  const result = await runCli(['eval', evalFile], env());
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('is not valid');
  expect(result.stderr).toContain('chek');
});
