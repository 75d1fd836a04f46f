import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, defaultPayloadConverter } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { remoteMessageId } from '../../src/a2a-remote/remote-message-id';
import { followToEnd } from '../support/ask';
import { assertCliBuilt, startCli } from '../support/cli-process';
import { type RemoteA2AAgent, startRemoteA2AAgent } from '../support/remote-a2a-agent';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { toolResultIn } from '../support/scripted-model';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

/**
 * A remote agent written with the A2A JavaScript SDK's server, called as a tool by conversations on
 * a worker in its own process: asked once per call, its question answered by a second call, and
 * followed by the next worker when the one that sent the message is killed.
 */
const TOKEN = `remote-token-${randomUUID()}`;

let remote: RemoteA2AAgent;
let model: ScriptedModelServer;
let connection: Connection;
let client: Client;
let agent: AgentClient;
let workspace: string;
let env: Record<string, string>;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  remote = await startRemoteA2AAgent({ token: TOKEN });
  model = await startScriptedModelServer([
    // A question the remote asks back, answered by a second call naming its task.
    { toolCalls: [{ id: 'call_ask', name: 'colours', arguments: { message: 'ask: which colour?' } }] },
    (request) => {
      const taskId = /"taskId": "([^"]+)"/.exec(toolResultIn(request, 'call_ask'))?.[1];
      if (!taskId) throw new Error('the tool result names no task to answer');
      return { toolCalls: [{ id: 'call_answer', name: 'colours', arguments: { taskId, message: 'blue' } }] };
    },
    { text: 'The remote agent says the colour is blue.' },
    // The call during which the worker is killed.
    { toolCalls: [{ id: 'call_slow', name: 'colours', arguments: { message: 'take your time' } }] },
    { text: 'The remote agent answered.' },
    // The call whose run is aborted.
    { toolCalls: [{ id: 'call_abort', name: 'colours', arguments: { message: 'never mind' } }] },
  ]);
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
  workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-a2a-remote-'));
  env = {
    TASK_QUEUE: `a2a-remote-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workspace,
    MARKER_DIR: workspace,
    COLOURS_TOKEN: TOKEN,
    DURABLE_AGENT_A2A_AGENTS: JSON.stringify({
      colours: { card: remote.cardUrl, tokenEnv: 'COLOURS_TOKEN' },
    }),
  };
  workers.push(await spawnWorkerProcess(env));
  agent = new AgentClient(client, env.TASK_QUEUE);
});

afterAll(async () => {
  for (const worker of workers) await killWorkerProcess(worker);
  remote.release();
  await remote?.close();
  await model?.close();
  await connection?.close();
  await rm(workspace, { recursive: true, force: true });
});

test('the model calls a remote A2A agent as a tool, answers the question it asks back, and gets its answer', async () => {
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Ask the colour desk.', { options: { approval: { mode: 'auto' } } });
  expect((await followToEnd(agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'The remote agent says the colour is blue.',
  });

  const { transcript } = await agent.state(id);
  const results = transcript.filter((message) => message.role === 'toolResult');
  expect(results).toMatchObject([
    {
      toolCallId: 'call_ask',
      isError: false,
      content: [{ type: 'text', text: expect.stringContaining('Which colour?') }],
    },
    { toolCallId: 'call_answer', isError: false, content: [{ type: 'text', text: 'the colour is blue' }] },
  ]);
  // One message per call, each under the id made from the conversation and the call.
  expect(remote.received.map((message) => message.messageId)).toEqual([
    remoteMessageId(id, 'call_ask'),
    remoteMessageId(id, 'call_answer'),
  ]);
}, 60_000);

test('a worker killed while the remote agent works: the next worker follows the same remote task, which got one message', async () => {
  const before = remote.received.length;
  remote.hold();
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Ask slowly.', { options: { approval: { mode: 'auto' } } });
  const handle = client.workflow.getHandle(id);
  // The remote task's id has reached Temporal in the call's heartbeat: the worker can die now.
  const first = await remoteTaskHeartbeat(handle, 1);
  expect(remote.received).toHaveLength(before + 1);

  await killWorkerProcess(workers[0]!);
  workers.push(await spawnWorkerProcess(env));
  // The next attempt, on the new worker, follows the task the first one started.
  const second = await remoteTaskHeartbeat(handle, 2);
  expect(second.taskId).toBe(first.taskId);
  remote.release();

  expect((await followToEnd(agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'The remote agent answered.',
  });
  const { transcript } = await agent.state(id);
  expect(transcript.find((message) => message.role === 'toolResult')).toMatchObject({
    toolCallId: 'call_slow',
    isError: false,
    content: [{ type: 'text', text: 'remote answer to: take your time' }],
  });
  expect(remote.received).toHaveLength(before + 1);
}, 90_000);

test('an abort of the run cancels the remote task', async () => {
  remote.hold();
  const id = `conv-${randomUUID()}`;
  await agent.send(id, 'Ask, then change your mind.', { options: { approval: { mode: 'auto' } } });
  const { taskId } = await remoteTaskHeartbeat(client.workflow.getHandle(id), 1);
  await agent.abort(id, { reason: 'changed my mind' });
  await waitFor(
    async () => ((await remoteTaskState(taskId)) === 'TASK_STATE_CANCELED' ? true : undefined),
    'the remote task to be canceled',
  );
  remote.release();
}, 60_000);

/** The remote task's state, asked of the remote directly. */
async function remoteTaskState(taskId: string): Promise<string> {
  const response = await fetch(`${remote.origin}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }),
  });
  return ((await response.json()) as { result: { status: { state: string } } }).result.status.state;
}

/** The remote task id the tool call's attempt `attempt` (or a later one) has heartbeated. */
function remoteTaskHeartbeat(
  handle: ReturnType<Client['workflow']['getHandle']>,
  attempt: number,
): Promise<{ taskId: string }> {
  return waitFor(async () => {
    const description = await handle.describe();
    for (const activity of description.raw.pendingActivities ?? []) {
      const payload = activity.heartbeatDetails?.payloads?.[0];
      if (!payload || (activity.attempt ?? 1) < attempt) continue;
      const details = defaultPayloadConverter.fromPayload<{ details?: { a2a?: { taskId?: string } } }>(
        payload,
      );
      const taskId = details.details?.a2a?.taskId;
      if (taskId) return { taskId };
    }
    return undefined;
  }, `attempt ${attempt} to heartbeat its remote task`);
}

describe('durable-agent a2a', () => {
  const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) => startCli(['a2a', ...args], env).done;

  beforeAll(() => assertCliBuilt());

  test('card prints the card, its origin given alone', async () => {
    const printed = await cli(['card', remote.origin, '--json']);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toEqual({
      name: 'Colour desk',
      description: 'Answers questions about colours.',
      skills: [],
      endpoint: `${remote.origin}/a2a`,
      streaming: true,
    });
  });

  test('send sends one message under the token and prints the answer; a question is answered with --task-id', async () => {
    const before = remote.received.length;
    const answered = await cli(['send', remote.cardUrl, 'hello there'], {
      ...process.env,
      DURABLE_AGENT_A2A_TOKEN: TOKEN,
    });
    expect(answered).toMatchObject({ code: 0, stdout: 'remote answer to: hello there\n' });
    expect(remote.received).toHaveLength(before + 1);

    const asked = await cli(['send', remote.cardUrl, 'ask: a colour', '--token', TOKEN, '--json']);
    const question = JSON.parse(asked.stdout) as { taskId: string; state: string; text: string };
    expect(question).toMatchObject({ state: 'input-required', text: 'Which colour?' });
    const reply = await cli([
      'send',
      remote.cardUrl,
      'green',
      '--task-id',
      question.taskId,
      '--token',
      TOKEN,
    ]);
    expect(reply).toMatchObject({ code: 0, stdout: 'the colour is green\n' });

    const failed = await cli(['send', remote.cardUrl, 'fail: out of paint', '--token', TOKEN]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('ended failed');
    expect(remote.received).toHaveLength(before + 4);
  }, 60_000);

  test('send without the token reaches nothing', async () => {
    const before = remote.received.length;
    const refused = await cli(['send', remote.cardUrl, 'hello']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/HTTP 401/);
    expect(remote.received).toHaveLength(before);
  });
});
