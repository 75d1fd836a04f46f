import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { waitFor } from '../support/test-worker';
import { followToEnd } from '../support/ask';
import { toolAttempts } from '../support/spawn-worker-process';

let model: ScriptedModelServer;
let connection: Connection;
let client: Client;
const children: ChildProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await model?.close();
  await connection.close();
});

function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, '../support/worker-process.ts')],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
  });
}

test('a worker killed while a tool runs: a new worker finishes the conversation, nothing lost or duplicated', async () => {
  model = await startScriptedModelServer([
    { text: 'Counting.', toolCalls: [{ id: 'call_count', name: 'slow_count', arguments: { n: 30 } }] },
    { text: 'Counted to thirty.' },
  ]);
  const markerDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-crash-'));
  // The first attempt cannot finish before the worker is killed, however slow the machine.
  await writeFile(path.join(markerDir, 'hold'), '');
  const env = {
    TASK_QUEUE: `crash-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: markerDir,
    MARKER_DIR: markerDir,
  };
  const attempts = () => toolAttempts(markerDir);

  const first = await startWorkerProcess(env);
  const agent = new AgentClient(client, env.TASK_QUEUE);
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Count to thirty, slowly.');
  await waitFor(
    async () => ((await attempts()).length === 1 ? true : undefined),
    'the tool to start on the first worker',
  );

  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  await startWorkerProcess(env);
  await rm(path.join(markerDir, 'hold'));

  expect((await followToEnd(agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Counted to thirty.',
  });

  const { transcript } = await agent.state(id);
  expect(transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
  expect(transcript[2]).toMatchObject({
    toolCallId: 'call_count',
    isError: false,
    content: [{ type: 'text', text: 'counted to 30' }],
  });

  // The tool started once per worker: its first attempt died with the first worker and was retried.
  // (Checked after the transcript, whose tool result says what happened when this fails.)
  const lines = await attempts();
  expect(lines).toHaveLength(2);
  expect(new Set(lines.map((line) => line.split(' ')[0])).size).toBe(2);

  // The second model call ran on the new worker with an empty cache and still got the whole transcript.
  expect(model.script.requests).toHaveLength(2);
  expect(model.script.requests[1]!.messages.map((message) => message.role)).toEqual([
    'system',
    'user',
    'assistant',
    'tool',
  ]);
  expect(model.script.exhausted).toBe(false);

  const history = await client.workflow.getHandle(id).fetchHistory();
  const completedTools = (history.events ?? []).filter(
    (event) => event.activityTaskCompletedEventAttributes,
  ).length;
  expect(completedTools).toBe(4); // listTools, callModel, runTool, callModel: each exactly once
}, 120_000);
