import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TurnComparison } from '../../src/client/rerun';
import { fetchConversationHistories } from '../../src/history/conversation-history';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

// A two-run conversation whose first run appends to a file, then `rerun` against another scripted
// model: recorded results served (the command ran once, in the original), `--tools live` runs it.

let original: ScriptedModelServer;
let harness: TestHarness;
const id = `conv-${randomUUID()}`;
const LOG = 'turns.log';
const appendOne = { id: 'call_append', name: 'exec', arguments: { command: `echo 1 >> ${LOG}` } };

beforeAll(async () => {
  assertCliBuilt();
  original = await startScriptedModelServer([
    { toolCalls: [appendOne] },
    { text: 'Done 1.' },
    { text: 'Done 2.' },
  ]);
  harness = await startHarness({ modelBaseUrl: original.baseUrl });
  const handle = harness.client.workflow.getHandle(id);
  for (let turn = 1; turn <= 2; turn++) {
    await harness.agent.send(id, `Turn ${turn}`, {
      options: { workspace: harness.workspace, approval: { mode: 'auto' } },
    });
    await waitForEvent(handle, 'run_finished', (event) => event.run === turn);
  }
});

afterAll(async () => {
  await harness?.close();
  await original?.close();
});

const log = () => readFile(path.join(harness.workspace, LOG), 'utf8');

/** `rerun` with its own worker against `model`, one JSON object per run. */
async function rerun(
  source: string,
  model: ScriptedModelServer,
  ...flags: string[]
): Promise<TurnComparison[]> {
  const result = await runCli(
    ['rerun', source, '--base-url', model.baseUrl, '--workspace', harness.workspace, '--json', ...flags],
    { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS },
  );
  if (result.code !== 0) throw new Error(`rerun exited ${result.code}: ${result.stderr}`);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TurnComparison);
}

test("rerun ID from a directory outside the worker's workspace roots reruns in the original's workspace, with its options", async () => {
  const other = await startScriptedModelServer([
    {
      toolCalls: [{ id: 'call_elsewhere', name: 'exec', arguments: { command: 'echo 3 >> elsewhere.log' } }],
    },
    { text: 'Wrote 3.' },
    { text: 'Still 3.' },
  ]);
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-rerun-cwd-'));
  try {
    const result = await runCli(
      ['rerun', id, '--base-url', other.baseUrl, '--tools', 'live', '--json'],
      {
        ...process.env,
        TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
        AGENT_WORKSPACE_ROOTS: harness.workspace,
      },
      { cwd: elsewhere },
    );
    expect(result).toMatchObject({ code: 0 });
    // The original's approval mode (auto) held: the command ran without asking, where the original worked.
    expect(await readFile(path.join(harness.workspace, 'elsewhere.log'), 'utf8')).toBe('3\n');
    await expect(readFile(path.join(elsewhere, 'elsewhere.log'), 'utf8')).rejects.toThrow('ENOENT');
  } finally {
    await other.close();
  }
});

test('with recorded tools the same call gets the original result without running; the report shows both answers', async () => {
  const other = await startScriptedModelServer([
    { toolCalls: [{ ...appendOne, id: 'call_again' }] },
    { text: 'New 1.' },
    { toolCalls: [{ id: 'call_other', name: 'exec', arguments: { command: `echo 2 >> ${LOG}` } }] },
    { text: 'New 2.' },
  ]);
  try {
    const rerunId = `conv-${randomUUID()}`;
    const turns = await rerun(id, other, '--id', rerunId);
    expect(turns.map((turn) => [turn.run, turn.messages, turn.original.answer, turn.rerun.answer])).toEqual([
      [1, ['Turn 1'], 'Done 1.', 'New 1.'],
      [2, ['Turn 2'], 'Done 2.', 'New 2.'],
    ]);
    expect(turns[0]).toMatchObject({
      answerChanged: true,
      toolsChanged: false,
      original: { toolCalls: [{ name: 'exec' }], tokens: { input: expect.any(Number) } },
    });
    expect(turns[1]!.toolsChanged).toBe(true);
    // The served result is the original's output; the unrecorded call was answered, not run.
    const served = other.script.requests[1]!.messages.find((message) => message.role === 'tool');
    const notRecorded = other.script.requests[3]!.messages.filter((message) => message.role === 'tool').at(
      -1,
    );
    expect(JSON.stringify(notRecorded?.content)).toContain('not recorded');
    const originalResult = (await harness.agent.state(id)).transcript.find(
      (message) => message.role === 'toolResult',
    );
    expect(served?.content).toEqual(
      originalResult?.role === 'toolResult' && originalResult.content[0]?.type === 'text'
        ? originalResult.content[0].text
        : 'no original result',
    );
    // Nothing ran in the rerun: no tool activity in its history.
    const rerunEvents = (await fetchConversationHistories(harness.client, rerunId)).flatMap(
      (execution) => execution.history.events ?? [],
    );
    const scheduled = rerunEvents.map(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name,
    );
    expect(scheduled).toContain('callModel');
    expect(scheduled).not.toContain('runTool');
    expect(await log()).toBe('1\n');
  } finally {
    await other.close();
  }
});

test('--tools live runs what the recording lacks; --at 2 from an exported file starts from the end of run 1', async () => {
  const other = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_live', name: 'exec', arguments: { command: `echo live >> ${LOG}` } }] },
    { text: 'Ran it.' },
    { text: 'From the file.' },
  ]);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-rerun-'));
  const file = path.join(directory, 'history.json');
  try {
    const live = await rerun(id, other, '--tools', 'live', '--at', '2');
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ run: 2, rerun: { answer: 'Ran it.' }, toolsChanged: true });
    expect(await log()).toBe('1\nlive\n');

    expect(
      (
        await runCli(['export', id, file], {
          ...process.env,
          TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
        })
      ).code,
    ).toBe(0);
    const before = other.script.requests.length;
    const fromFile = await rerun(file, other, '--at', '2');
    expect(fromFile.map((turn) => [turn.run, turn.rerun.answer])).toEqual([[2, 'From the file.']]);
    // The model saw run 1 as it was, then run 2's message.
    const seen = other.script.requests[before]!.messages.filter((message) => message.role === 'user');
    expect(seen.map((message) => message.content)).toEqual(['Turn 1', 'Turn 2']);
  } finally {
    await other.close();
  }
});

test('--tools ask holds a call the original did not make until a person allows it, though the original ran unasked', async () => {
  const other = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_asked', name: 'exec', arguments: { command: `echo asked >> ${LOG}` } }] },
    { text: 'Ran it once allowed.' },
  ]);
  const rerunId = `conv-${randomUUID()}`;
  const rerun = startCli(
    [
      'rerun',
      id,
      '--at',
      '2',
      '--tools',
      'ask',
      '--id',
      rerunId,
      '--base-url',
      other.baseUrl,
      '--workspace',
      harness.workspace,
    ],
    { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS },
  );
  try {
    await rerun.stderrMatching(
      new RegExp(
        `waiting for a decision on exec \\(call_asked\\): durable-agent approve ${rerunId} call_asked`,
      ),
    );
    expect((await harness.agent.pendingApprovals(rerunId)).map((pending) => pending.toolCallId)).toEqual([
      'call_asked',
    ]);
    expect(await log()).not.toContain('asked');

    await harness.agent.approve(rerunId, { toolCallId: 'call_asked', decision: 'allow_once', by: 'alice' });
    const done = await rerun.done;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('Ran it once allowed.');
    expect(await log()).toMatch(/\nasked\n$/);
  } finally {
    rerun.kill();
    await other.close();
  }
});

test('rerun refuses --base-url with a shared worker, and a bad --tools', async () => {
  const env = { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS };
  const shared = await runCli(['rerun', id, '--no-worker', '--base-url', 'http://127.0.0.1:1/v1'], env);
  expect(shared.code).toBe(2);
  expect(shared.stderr).toContain("--base-url needs rerun's own worker");
  const tools = await runCli(['rerun', id, '--tools', 'maybe'], env);
  expect(tools.code).toBe(2);
  expect(tools.stderr).toContain('--tools takes recorded, live or ask, not maybe');
});
