import { randomUUID } from 'node:crypto';
import { type Client, type WorkflowHandle, WithStartWorkflowOperation } from '@temporalio/client';
import nock from 'nock';
import { ConversationSchedules } from '../../src/client/conversation-schedules';
import { CONVERSATION_WORKFLOW_TYPE } from '../../src/shared/constants';
import {
  AGENT_DAILY_BUDGET_WORKFLOW_TYPE,
  type AgentDailyBudgetInput,
  agentDailyBudgetWorkflowId,
  spendDailyTokensUpdate,
  utcDayOf,
} from '../../src/shared/daily-budget';
import {
  MODEL_LIMITER_WORKFLOW_TYPE,
  type ModelLimiterInput,
  type ModelLimits,
  acquireModelLeaseUpdate,
  modelLimiterWorkflowId,
  releaseModelLeaseSignal,
} from '../../src/shared/model-limiter';
import { subAgentId } from '../../src/shared/sub-agents';
import { DEFAULT_MAX_HISTORY_EVENTS, WORKFLOW_TASK_TIMEOUT_MS } from '../../src/shared/workflow-task-bounds';
import { type RunningServer, startDevServer } from '../../src/temporal-server/dev-server';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { unclaimedPort } from '../support/unclaimed-port';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool]);

/** A turn that calls `echo` `calls` times at once, then answers. */
const fanOutTurn = (calls: number, answer: string) => [
  {
    toolCalls: Array.from({ length: calls }, (_, index) => ({
      name: 'echo',
      arguments: { text: `e${index}` },
    })),
  },
  { text: answer },
];

/** The workflow task timeout a run was started with, as its history records it. */
async function taskTimeoutMs(client: Client, workflowId: string, runId?: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started) throw new Error(`${workflowId}'s history does not open with its start`);
  const timeout = started.workflowTaskTimeout;
  return Number(timeout?.seconds ?? 0) * 1_000 + Math.round((timeout?.nanos ?? 0) / 1e6);
}

async function continuedRun(handle: WorkflowHandle, firstRunId: string): Promise<string> {
  return waitFor(async () => {
    const { runId } = await handle.describe();
    return runId !== firstRunId ? runId : undefined;
  }, `${handle.workflowId} to continue as new`);
}

test('a worker killed in the middle of a workflow task holds a conversation up for the short task timeout: as the agent client starts it, and from the first continued run of one a plain client started', async () => {
  expect(WORKFLOW_TASK_TIMEOUT_MS).toBeLessThan(10_000);
  const sent = `conv-${randomUUID()}`;
  nockModel([{ text: 'hello' }]);
  await harness().agent.send(sent, 'hi');
  const sentHandle = harness().client.workflow.getHandle(sent);
  await waitForEvent(sentHandle, 'run_finished', (event) => event.run === 1);
  expect(await taskTimeoutMs(harness().client, sent)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
  // The first script's spare reply would answer the next conversation's first request.
  nock.cleanAll();

  // Started as any Temporal client would, with Temporal's default of 10 s.
  const plain = `conv-${randomUUID()}`;
  const handle = await harness().client.workflow.start(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: plain,
    taskQueue: harness().taskQueue,
    args: [{ options: { maxHistoryEvents: 50, approval: { mode: 'auto' } } }],
  });
  const firstRunId = handle.firstExecutionRunId;
  expect(await taskTimeoutMs(harness().client, plain, firstRunId)).toBe(10_000);
  nockModel(fanOutTurn(20, 'echoed'));
  await harness().agent.send(plain, 'echo twenty times');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  const next = await continuedRun(handle, firstRunId);
  expect(await taskTimeoutMs(harness().client, plain, next)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
});

test('a conversation whose options set no history bound continues as new once its run has the default number of events, so an uncached replay stays well inside the task timeout', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  // Each tool call adds at least three events (scheduled, started, completed).
  const calls = Math.ceil(DEFAULT_MAX_HISTORY_EVENTS / 3) + 10;
  nockModel([...fanOutTurn(calls, 'all echoed'), { text: 'second answer' }]);
  await harness().agent.send(id, 'echo many times', { options: { approval: { mode: 'auto' } } });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId ?? '';
  const next = await continuedRun(handle, firstRunId);
  const first = await harness().client.workflow.getHandle(id, firstRunId).describe();
  expect(first.historyLength).toBeGreaterThanOrEqual(DEFAULT_MAX_HISTORY_EVENTS);

  // The continued run answers as before, on a short history.
  await harness().agent.send(id, 'and again');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 2);
  const continued = await harness().client.workflow.getHandle(id, next).describe();
  expect(continued.historyLength).toBeLessThan(200);
});

test('a conversation AgentClient.start starts has the short task timeout', async () => {
  const id = await harness().agent.start(`conv-${randomUUID()}`);
  expect(await taskTimeoutMs(harness().client, id)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
  await harness().agent.end(id);
});

test('a sub-agent, a child workflow of its conversation, has the short task timeout', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'Say hello' } }] },
    { text: 'Hello.' },
    { text: 'The sub-agent said hello.' },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, 'Delegate the greeting');
  await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished', (event) => event.run === 1);
  expect(await taskTimeoutMs(harness().client, subAgentId(id, 'call_spawn'))).toBe(WORKFLOW_TASK_TIMEOUT_MS);
});

test('a conversation a schedule starts has the short task timeout', async () => {
  const schedules = new ConversationSchedules(harness().client, harness().taskQueue);
  nockModel([{ text: 'Report ready.' }]);
  // Once a year, so only the trigger starts one during the test.
  const scheduleId = await schedules.create({
    scheduleId: `bounds-${randomUUID().slice(0, 8)}`,
    cron: '0 0 1 1 *',
    prompt: 'Write the report',
  });
  try {
    await schedules.trigger(scheduleId);
    const [started] = await waitFor(async () => {
      const conversations = await schedules.recentConversations(scheduleId);
      return conversations.length > 0 ? conversations : undefined;
    }, 'the scheduled conversation');
    expect(await taskTimeoutMs(harness().client, started!)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
    await waitForEvent(harness().client.workflow.getHandle(started!), 'run_finished');
    await harness().agent.end(started!);
  } finally {
    await schedules.delete(scheduleId);
  }
});

test("an agent's daily ledger and the model endpoint's limiter, which a model call starts, have the short task timeout", async () => {
  const agentId = `bounds-${randomUUID().slice(0, 8)}`;
  const endpointKey = `bounds-${randomUUID()}`;
  const fleet = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    dailyTokenBudgets: { agents: { [agentId]: 1_000_000 } },
    modelLimiter: { endpointKey, limits: { maxConcurrent: 4, leaseTtlMs: 30_000 } },
  });
  // The day the call's ledger is for: the day it started, or the next if that ended meanwhile.
  const days = new Set([utcDayOf(Date.now())]);
  const limiter = modelLimiterWorkflowId(endpointKey);
  try {
    nockModel([{ text: 'hello' }]);
    const id = `conv-${randomUUID()}`;
    await fleet.agent.send(id, 'hi', { options: { agentId } });
    await waitForEvent(fleet.client.workflow.getHandle(id), 'run_finished', (event) => event.run === 1);
    days.add(utcDayOf(Date.now()));
    const ledgers = await Promise.all(
      [...days].map(async (day) => {
        const ledger = agentDailyBudgetWorkflowId(agentId, day);
        const found = await fleet.client.workflow
          .getHandle(ledger)
          .describe()
          .then(
            () => true,
            () => false,
          );
        return found ? ledger : undefined;
      }),
    );
    const ledger = ledgers.find((found) => found !== undefined);
    expect(ledger).toBeDefined();
    expect(await taskTimeoutMs(fleet.client, ledger!)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
    expect(await taskTimeoutMs(fleet.client, limiter)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
  } finally {
    // Neither would end by itself for a while: the ledger an hour after its day, the limiter never.
    for (const workflowId of [limiter, ...[...days].map((day) => agentDailyBudgetWorkflowId(agentId, day))])
      await fleet.client.workflow
        .getHandle(workflowId)
        .terminate('test over')
        .catch(() => undefined);
    await fleet.close();
  }
});

/** Calls `act` (numbered from 1) until the workflow has continued as new; returns the new run's id. */
async function actUntilContinued(
  handle: WorkflowHandle,
  firstRunId: string,
  act: (n: number) => Promise<unknown>,
): Promise<string> {
  for (let n = 1; n <= 200; n++) {
    await act(n);
    const { runId } = await handle.describe();
    if (runId !== firstRunId) return runId;
  }
  throw new Error(`${handle.workflowId} did not continue as new`);
}

// The shared server suggests continuing as new after 4,096 events (Temporal's default); this one
// after 40, so the ledger and the limiter reach their continue-as-new in a few calls.
describe('continued as new, on a server that suggests it early', () => {
  let server: RunningServer | undefined;
  let worker: TestHarness | undefined;
  beforeAll(async () => {
    server = await startDevServer({
      port: await unclaimedPort(),
      dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 },
    });
    worker = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, address: server.address });
  }, 300_000);
  afterAll(async () => {
    await worker?.close();
    await server?.stop();
  });

  test("an agent's daily ledger a plain client started continues with the short task timeout", async () => {
    const { client, taskQueue } = worker!;
    const agentId = `bounds-${randomUUID().slice(0, 8)}`;
    const day = utcDayOf(Date.now());
    const workflowId = agentDailyBudgetWorkflowId(agentId, day);
    const spend = (n: number) =>
      client.workflow.executeUpdateWithStart(spendDailyTokensUpdate, {
        args: [{ tokens: 1, key: `call-${n}` }],
        startWorkflowOperation: new WithStartWorkflowOperation<
          (input: AgentDailyBudgetInput) => Promise<void>
        >(AGENT_DAILY_BUDGET_WORKFLOW_TYPE, {
          workflowId,
          taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ agentId, day }],
        }),
      });
    await spend(0);
    const handle = client.workflow.getHandle(workflowId);
    const { runId: firstRunId } = await handle.describe();
    // Temporal's default, as any client starts it.
    expect(await taskTimeoutMs(client, workflowId, firstRunId)).toBe(10_000);
    const next = await actUntilContinued(handle, firstRunId, spend);
    expect(await taskTimeoutMs(client, workflowId, next)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
    await handle.terminate('test over');
  });

  test("a model endpoint's limiter a plain client started continues with the short task timeout", async () => {
    const { client, taskQueue } = worker!;
    const workflowId = modelLimiterWorkflowId(`bounds-${randomUUID()}`);
    const limits: ModelLimits = { maxConcurrent: 1_000, leaseTtlMs: 60_000 };
    const handle = client.workflow.getHandle(workflowId);
    const leaseOnce = async (n: number) => {
      const ticket = `ticket-${n}`;
      const answer = await client.workflow.executeUpdateWithStart(acquireModelLeaseUpdate, {
        args: [{ ticket, agent: 'bounds', tree: 'bounds', limits }],
        startWorkflowOperation: new WithStartWorkflowOperation<(input: ModelLimiterInput) => Promise<void>>(
          MODEL_LIMITER_WORKFLOW_TYPE,
          { workflowId, taskQueue, workflowIdConflictPolicy: 'USE_EXISTING', args: [{ limits }] },
        ),
      });
      if (answer.granted) await handle.signal(releaseModelLeaseSignal, { ticket, outcome: 'ok' });
    };
    await leaseOnce(0);
    const { runId: firstRunId } = await handle.describe();
    expect(await taskTimeoutMs(client, workflowId, firstRunId)).toBe(10_000);
    const next = await actUntilContinued(handle, firstRunId, leaseOnce);
    expect(await taskTimeoutMs(client, workflowId, next)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
    await handle.terminate('test over');
  });
});
