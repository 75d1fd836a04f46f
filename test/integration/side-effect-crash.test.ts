import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, defaultPayloadConverter } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import type { ToolRunInput } from '../../src/shared/tool-run';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';
import { followToEnd } from '../support/ask';

/**
 * A tool with side effects runs at most once, shown with a real crash: a worker is SIGKILLed while `exec` and `write` (side
 * effects) and `slow_count` (read-only) run. The read-only call is retried on the next worker; the
 * other two are not run again, and the model is told their outcome is unknown.
 */
let model: ScriptedModelServer | undefined;
let connection: Connection;
let client: Client;
let markerDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
  markerDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-side-effects-'));
});
afterAll(async () => {
  for (const child of children) await killWorkerProcess(child);
  // The command the first worker started outlived it (its own process group): stop it.
  const shells = await readLines(path.join(markerDir, 'exec-runs'));
  for (const pid of shells) {
    try {
      process.kill(-Number(pid), 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  await model?.close();
  await connection.close();
  await rm(markerDir, { recursive: true, force: true });
});

async function readLines(file: string): Promise<string[]> {
  return readFile(file, 'utf8').then(
    (text) => text.trim().split('\n').filter(Boolean),
    () => [],
  );
}

async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(env);
  children.push(child);
  return child;
}

/** Tool names whose activity has started and heartbeated (the heartbeat carries them). */
async function runningTools(conversationId: string): Promise<string[]> {
  const description = await client.workflow.getHandle(conversationId).describe();
  return (description.raw.pendingActivities ?? []).flatMap((activity) => {
    const payload = activity.heartbeatDetails?.payloads?.[0];
    if (!payload) return [];
    const details = defaultPayloadConverter.fromPayload<{ toolName?: string }>(payload);
    return details.toolName ? [details.toolName] : [];
  });
}

test('a worker killed mid-call: exec and write are reported as unknown outcomes and run once, the read-only tool is retried', async () => {
  // While the hold file exists, `write` has written but does not return, and the count does not finish.
  await writeFile(path.join(markerDir, 'hold'), '');
  model = await startScriptedModelServer([
    {
      text: 'Three things at once.',
      toolCalls: [
        { id: 'call_exec', name: 'exec', arguments: { command: 'echo $$ >> exec-runs; sleep 60' } },
        { id: 'call_write', name: 'write', arguments: { path: 'written.txt', content: 'written' } },
        { id: 'call_count', name: 'slow_count', arguments: { n: 40 } },
      ],
    },
    { text: 'Reported what happened.' },
  ]);
  const env = {
    TASK_QUEUE: `side-effects-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: markerDir,
    MARKER_DIR: markerDir,
  };

  const first = await startWorker(env);
  const agent = new AgentClient(client, env.TASK_QUEUE);
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Run, write and count.', { options: { approval: { mode: 'auto' } } });
  await waitFor(async () => {
    const running = (await runningTools(id)).sort().join(',');
    const execRuns = await readLines(path.join(markerDir, 'exec-runs'));
    return running === 'exec,slow_count,write' && execRuns.length === 1 ? true : undefined;
  }, 'all three tools to be running on the first worker');

  await killWorkerProcess(first);
  await startWorker(env);
  await rm(path.join(markerDir, 'hold'));

  expect((await followToEnd(agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Reported what happened.',
  });

  // What the model read.
  const results = Object.fromEntries(
    model.script.requests[1]!.messages.filter((message) => message.role === 'tool').map((message) => [
      message.tool_call_id,
      message.content as string,
    ]),
  );
  const unknownOutcome =
    /^the tool stopped reporting progress for \d+(\.\d+)?s \(its worker may have died\); it has side effects, so it was not run again and whatever it did before stopping may or may not have taken effect$/;
  for (const [toolCallId, tool] of [
    ['call_exec', 'exec'],
    ['call_write', 'write'],
  ]) {
    const result = JSON.parse(results[toolCallId!]!) as { status: string; tool: string; error: string };
    expect(result).toMatchObject({ status: 'error', tool });
    expect(result.error).toMatch(unknownOutcome);
  }
  expect(results.call_count).toBe('counted to 40');

  // What happened: the command ran once, the write was never attempted again, the count ran on both workers.
  expect(await readLines(path.join(markerDir, 'exec-runs'))).toHaveLength(1);
  expect(await readFile(path.join(markerDir, 'written.txt'), 'utf8')).toBe('written');
  const countAttempts = await readLines(path.join(markerDir, 'attempts'));
  expect(countAttempts).toHaveLength(2);
  expect(new Set(countAttempts.map((line) => line.split(' ')[0])).size).toBe(2);

  // And Temporal's own record: one attempt each for exec and write, two for the read-only count.
  const history = await client.workflow.getHandle(id).fetchHistory();
  const events = history.events ?? [];
  const toolOf = new Map<string, string>();
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name !== 'runTool') continue;
    const input = defaultPayloadConverter.fromPayload<ToolRunInput>(scheduled.input!.payloads![0]!);
    toolOf.set(String(event.eventId), input.toolName);
  }
  const attempts = Object.fromEntries(
    events.flatMap((event) => {
      const started = event.activityTaskStartedEventAttributes;
      const tool = started && toolOf.get(String(started.scheduledEventId));
      return tool ? [[tool, started.attempt]] : [];
    }),
  );
  expect(attempts).toEqual({ exec: 1, write: 1, slow_count: 2 });
  const timedOut = events.filter((event) => event.activityTaskTimedOutEventAttributes).length;
  expect(timedOut).toBe(2);
}, 180_000);
