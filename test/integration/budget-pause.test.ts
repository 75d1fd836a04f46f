import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import type { PendingApproval } from '../../src/shared/approvals';
import { followToEnd } from '../support/ask';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

let model: ScriptedModelServer | undefined;
let connection: Connection;
let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
});
afterAll(async () => {
  for (const worker of workers) await killWorkerProcess(worker);
  await model?.close();
  await connection.close();
});

/** The scripted model reports 15 tokens (10 in, 5 out) for every call. */
const TOKENS_PER_CALL = 15;
const countStep = (step: number) => ({
  text: `Step ${step}.`,
  toolCalls: [{ id: `call_count_${step}`, name: 'slow_count', arguments: { n: 1 } }],
});

test('a token budget pauses the run with a decision that survives a killed worker; a raise goes on, a reject stops the run', async () => {
  model = await startScriptedModelServer([
    ...Array.from({ length: 9 }, (_, index) => countStep(index + 1)),
    { text: 'Done counting.' },
  ]);
  const markerDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-budget-'));
  const env = {
    TASK_QUEUE: `budget-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: markerDir,
    MARKER_DIR: markerDir,
  };
  const startWorker = async () => {
    const worker = await spawnWorkerProcess(env);
    workers.push(worker);
    return worker;
  };
  const toolRuns = () =>
    readFile(path.join(markerDir, 'attempts'), 'utf8').then(
      (text) => text.trim().split('\n'),
      () => [],
    );
  const agent = new AgentClient(client, env.TASK_QUEUE);
  const id = `conv-${randomUUID()}`;
  const pendingBudget = (toolCallId: string) =>
    waitFor<PendingApproval>(
      async () => (await agent.pendingApprovals(id)).find((pending) => pending.toolCallId === toolCallId),
      `the budget pause ${toolCallId}`,
    );

  const first = await startWorker();
  const sent = await agent.send(id, 'Count, step by step.', { options: { budget: { tokens: 100 } } });

  // Seven calls of 15 tokens reach 105: the eighth is not made, the run waits for a person.
  const paused = await pendingBudget('budget-1');
  expect(paused).toMatchObject({
    toolName: 'budget',
    run: 1,
    budget: { kind: 'tokens', used: 7 * TOKENS_PER_CALL, limit: 100, defaultRaise: 100 },
  });
  expect(model.script.requests).toHaveLength(7);
  const status = await agent.status(id);
  expect(status).toMatchObject({ status: 'running', pendingApprovals: 1 });
  expect(status.budget).toMatchObject({
    used: { tokens: 105, toolCalls: 7 },
    run: { run: 1, tokens: 105, toolCalls: 7 },
    limits: { tokens: 100 },
  });
  expect((await agent.events(id)).filter((event) => event.type === 'approval_requested')).toEqual([
    expect.objectContaining({ toolCallId: 'budget-1', toolName: 'budget' }),
  ]);

  // The worker dies while the run waits; the next one finds the same pause and takes the decision.
  await killWorkerProcess(first);
  await startWorker();
  expect(await pendingBudget('budget-1')).toEqual(paused);
  expect(
    await agent.approve(id, {
      toolCallId: 'budget-1',
      decision: 'allow_once',
      by: 'alice',
      raise: { tokens: 30 },
    }),
  ).toEqual({ toolCallId: 'budget-1', toolName: 'budget', decision: 'allow_once' });

  // Thirty more tokens from the 105 used: two more calls, then the run waits again.
  expect(await pendingBudget('budget-2')).toMatchObject({
    budget: { kind: 'tokens', used: 135, limit: 135 },
  });
  expect(model.script.requests).toHaveLength(9);
  await agent.approve(id, { toolCallId: 'budget-2', decision: 'reject_once', by: 'bob', reason: 'enough' });

  const { finished, seen } = await followToEnd(agent, sent);
  expect(finished).toMatchObject({ outcome: 'budget_exhausted', usage: { tokens: 135, toolCalls: 9 } });
  expect(seen.find((event) => event.type === 'budget_exhausted')).toMatchObject({
    budget: 'tokens',
    used: 135,
    limit: 135,
    by: 'bob',
    reason: 'enough',
  });

  // Nothing lost or done twice: every model reply and tool result is in the transcript, each tool ran once.
  const { transcript } = await agent.state(id);
  expect(transcript).toHaveLength(1 + 9 * 2);
  expect(transcript.filter((message) => message.role === 'toolResult' && !message.isError)).toHaveLength(9);
  expect(await toolRuns()).toHaveLength(9);
  const history = await client.workflow.getHandle(id).fetchHistory();
  const modelCalls = (history.events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  expect(modelCalls).toHaveLength(9);

  // The conversation takes the next message; its run finds the budget spent and asks at once.
  expect((await agent.status(id)).status).toBe('idle');
  const next = await agent.send(id, 'Finish up.');
  expect(await pendingBudget('budget-3')).toMatchObject({ run: 2, budget: { kind: 'tokens', used: 135 } });
  expect(model.script.requests).toHaveLength(9);
  // Allowed without an amount: raised by the budget the conversation started with.
  await agent.approve(id, { toolCallId: 'budget-3', decision: 'allow_once', by: 'alice' });
  expect((await followToEnd(agent, next)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Done counting.',
    usage: { tokens: TOKENS_PER_CALL, toolCalls: 0 },
  });
  expect((await agent.status(id)).budget).toMatchObject({
    used: { tokens: 150, toolCalls: 9 },
    run: { run: 2, tokens: 15, toolCalls: 0 },
    limits: { tokens: 235 },
  });
}, 180_000);
