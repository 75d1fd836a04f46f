import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Timeline, TimelineItem } from '../../src/history/timeline';
import { pendingApprovalsQuery } from '../../src/shared/conversation-api';
import { assertCliBuilt, runCli } from '../support/cli-process';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

// A real conversation that asks for an approval and continues as new, then `history`, `export` and
// `replay` from the built command line against it.

const TURNS = 4;
let model: ScriptedModelServer;
let harness: TestHarness;
let env: NodeJS.ProcessEnv;
let directory: string;
const id = `conv-${randomUUID()}`;

beforeAll(async () => {
  assertCliBuilt();
  model = await startScriptedModelServer([
    {
      text: 'Writing.',
      toolCalls: [{ id: 'call_write', name: 'write', arguments: { path: 'note.txt', content: 'hi' } }],
    },
    { text: 'Wrote note.txt.' },
    ...Array.from({ length: TURNS - 1 }, (_, turn) => [
      { toolCalls: [{ id: `call_look_${turn}`, name: 'list_directory', arguments: {} }] },
      { text: `Look ${turn} done.` },
    ]).flat(),
  ]);
  harness = await startHarness({ modelBaseUrl: model.baseUrl });
  env = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: harness.taskQueue,
  };
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-history-'));

  // Runs 1..TURNS: an approval decided by an update, then a tool call per turn; history of at most
  // 50 events per execution, so the conversation continues as new on the way.
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Write a note', {
    options: { maxHistoryEvents: 50, workspace: harness.workspace },
  });
  await waitFor(
    async () => ((await handle.query(pendingApprovalsQuery)).length ? true : undefined),
    'the approval',
  );
  await harness.agent.approve(id, {
    toolCallId: 'call_write',
    decision: 'allow_once',
    by: 'alice',
    reason: 'fine',
  });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  for (let run = 2; run <= TURNS; run++) {
    await harness.agent.send(id, `Look ${run}`);
    await waitForEvent(handle, 'run_finished', (event) => event.run === run);
  }
});

afterAll(async () => {
  await harness?.close();
  await model?.close();
});

function itemsOf<K extends TimelineItem['kind']>(timeline: Timeline, kind: K) {
  return timeline.items.filter((item): item is Extract<TimelineItem, { kind: K }> => item.kind === kind);
}

test('history --json: every execution, run, model call, tool call and the approval, in order', async () => {
  const result = await runCli(['history', id, '--json'], env);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const timeline = JSON.parse(result.stdout) as Timeline;
  expect(timeline.conversationId).toBe(id);
  expect(timeline.executions.length).toBeGreaterThanOrEqual(2);
  expect(timeline.executions.at(-1)!.status).toBe('running');
  expect(timeline.executions.slice(0, -1).every((execution) => execution.status === 'continued_as_new')).toBe(
    true,
  );
  expect(itemsOf(timeline, 'continued_as_new')).toHaveLength(timeline.executions.length - 1);
  // Runs are numbered on across executions, one per message.
  expect(itemsOf(timeline, 'run_started').map((run) => run.run)).toEqual([1, 2, 3, 4]);
  expect(itemsOf(timeline, 'user_message').map((message) => message.text)).toEqual([
    'Write a note',
    'Look 2',
    'Look 3',
    'Look 4',
  ]);
  expect(itemsOf(timeline, 'approval')).toEqual([
    expect.objectContaining({
      toolCallId: 'call_write',
      decision: 'allow_once',
      by: 'alice',
      reason: 'fine',
      via: 'update',
      run: 1,
    }),
  ]);
  const tools = itemsOf(timeline, 'tool_call');
  expect(tools.map((call) => [call.toolCallId, call.run, call.outcome, call.ran])).toEqual([
    ['call_write', 1, 'completed', true],
    ['call_look_0', 2, 'completed', true],
    ['call_look_1', 3, 'completed', true],
    ['call_look_2', 4, 'completed', true],
  ]);
  expect(tools[0]).toMatchObject({
    arguments: { path: 'note.txt', content: 'hi' },
    attempts: 1,
    result: 'Wrote 2 bytes to note.txt',
  });
  const modelCalls = itemsOf(timeline, 'model_call');
  expect(modelCalls).toHaveLength(2 * TURNS);
  for (const call of modelCalls) {
    expect(call).toMatchObject({
      outcome: 'completed',
      attempts: 1,
      usage: expect.objectContaining({ inputTokens: expect.any(Number) }),
    });
  }
  const kinds = timeline.items.map((item) => item.kind);
  expect(kinds.indexOf('approval')).toBeLessThan(kinds.indexOf('tool_call'));
});

test('history: one line per item, the continue-as-new boundary shown', async () => {
  const result = await runCli(['history', id], env);
  expect(result.code).toBe(0);
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(
    new RegExp(`^conversation ${id}: \\d+ executions \\(latest running\\), 4 runs, 8 model calls`),
  );
  expect(result.stdout).toMatch(
    /\n +\+\d+\.\d{3}s {2}\[run 1\] approval of call_write: allow_once by alice \(fine\) \[update\]\n/,
  );
  expect(result.stdout).toMatch(/ continued as new → run id \S+\n/);
  expect(result.stdout).toMatch(
    / execution 2 started \(run id \S+, continued from \S+; carried \d+ messages, \d+ queued\)/,
  );
});

test('export writes a history that replays; with --all-executions every execution replays', async () => {
  const current = path.join(directory, 'current.json');
  const exported = await runCli(['export', id, current], env);
  expect(exported.code).toBe(0);
  expect(exported.stderr).toMatch(
    new RegExp(`wrote \\d+ events of execution \\S+ of conversation ${id} to ${current}`),
  );
  const history = JSON.parse(await readFile(current, 'utf8')) as { events: Array<{ eventType: string }> };
  expect(history.events[0]!.eventType).toBe('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED');

  const replayed = await runCli(['replay', current], env);
  expect(replayed.stdout).toMatch(/^execution 1\/1 \(run id \S+\): replays\n$/);
  expect(replayed.code).toBe(0);

  const all = path.join(directory, 'all.json');
  const exportedAll = await runCli(['export', id, all, '--all-executions', '--json'], env);
  expect(exportedAll.code).toBe(0);
  const histories = JSON.parse(await readFile(all, 'utf8')) as unknown[];
  expect(histories.length).toBeGreaterThanOrEqual(2);
  expect(JSON.parse(exportedAll.stdout)).toMatchObject({ conversationId: id, file: all });
  expect((JSON.parse(exportedAll.stdout) as { runIds: string[] }).runIds).toHaveLength(histories.length);
  const replayedAll = await runCli(['replay', all, '--json'], env);
  expect(replayedAll.code).toBe(0);
  const reports = replayedAll.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { ok: boolean; workflowId: string });
  expect(reports).toHaveLength(histories.length);
  expect(reports.every((report) => report.ok && report.workflowId === id)).toBe(true);
});

test('replay ID replays every execution straight from the server', async () => {
  const result = await runCli(['replay', id], env);
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(/^execution 1\/\d \(run id \S+\): replays\n/);
  expect(result.stdout).not.toMatch(/NONDETERMINISM/);
});

test('replay of a history the code no longer matches exits 1 naming the event and what the code did', async () => {
  const all = path.join(directory, 'to-tamper.json');
  expect((await runCli(['export', id, all, '--all-executions'], env)).code).toBe(0);
  const [history] = JSON.parse(await readFile(all, 'utf8')) as Array<{
    events: Array<Record<string, unknown>>;
  }>;
  // As if an earlier version had started a timer where today's code schedules its first activity.
  const scheduled = history!.events.find(
    (event) => event.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
  )!;
  const { workflowTaskCompletedEventId } = scheduled.activityTaskScheduledEventAttributes as Record<
    string,
    unknown
  >;
  delete scheduled.activityTaskScheduledEventAttributes;
  scheduled.eventType = 'EVENT_TYPE_TIMER_STARTED';
  scheduled.timerStartedEventAttributes = {
    timerId: '1',
    startToFireTimeout: '60s',
    workflowTaskCompletedEventId,
  };
  const current = path.join(directory, 'tampered.json');
  await writeFile(current, JSON.stringify(history));

  const result = await runCli(['replay', current], env);
  expect(result.code).toBe(1);
  const eventId = scheduled.eventId as string;
  expect(result.stdout).toContain(`NONDETERMINISM at event ${eventId} TimerStarted`);
  expect(result.stdout).toMatch(
    new RegExp(
      `history records: TimerStarted at \\S+ \\{"timerId":"1","startToFireTimeout":\\{"seconds":60\\}`,
    ),
  );
  expect(result.stdout).toContain('the current code: the workflow code issued an activity command here');
  expect(result.stdout).toContain(
    `Temporal says: Activity machine does not handle this event: HistoryEvent(id: ${eventId}, TimerStarted)`,
  );

  const json = await runCli(['replay', current, '--json'], env);
  expect(json.code).toBe(1);
  expect(JSON.parse(json.stdout)).toMatchObject({
    ok: false,
    workflowId: id,
    nondeterminism: { eventId: Number(eventId), recorded: 'TimerStarted', event: { type: 'TimerStarted' } },
  });
});

test('history of a conversation that does not exist exits 1 saying so', async () => {
  const result = await runCli(['history', 'conv-never-was'], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toBe('durable-agent: conversation conv-never-was not found\n');
});
