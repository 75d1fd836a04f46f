import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import {
  MODEL_LIMITER_WORKFLOW_TYPE,
  type ModelLimiterInput,
  modelLimiterStatusQuery,
  modelLimiterWorkflowId,
} from '../../src/shared/model-limiter';
import { modelEndpointKey } from '../../src/worker/model-limit-settings';
import { followToEnd } from '../support/ask';
import {
  type MeteredAnswer,
  type MeteredModelServer,
  startMeteredModelServer,
} from '../support/metered-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

let connection: Connection;
let client: Client;
const workers: ChildProcess[] = [];
const servers: MeteredModelServer[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
});
afterAll(async () => {
  await Promise.all(workers.map(killWorkerProcess));
  await Promise.all(servers.map((server) => server.close()));
  await connection.close();
});

/** A model endpoint and `count` worker processes that share `limits` on it, on a task queue of their own. */
async function fleet(
  count: number,
  limits: Record<string, string>,
  answerFor: (index: number) => MeteredAnswer,
): Promise<{ model: MeteredModelServer; agent: AgentClient; env: Record<string, string> }> {
  const model = await startMeteredModelServer((_request, index) => answerFor(index));
  servers.push(model);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-fleet-'));
  const env = {
    TASK_QUEUE: `fleet-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workspace,
    MARKER_DIR: workspace,
    ...limits,
  };
  for (let i = 0; i < count; i++) workers.push(await spawnWorkerProcess(env));
  return { model, agent: new AgentClient(client, env.TASK_QUEUE), env };
}

const answered = (text: string) => ({ reply: { text }, holdMs: 0 });

/** The fleet's limiter of `model`'s endpoint (whichever run of it is current). */
function limiterOf(model: MeteredModelServer) {
  return client.workflow.getHandle(modelLimiterWorkflowId(modelEndpointKey(model.baseUrl)));
}

/** A promise the test settles when it likes, with the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function askAll(agent: AgentClient, count: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const sent = await agent.send(`fleet-${randomUUID()}`, `question ${i}`);
      return (await followToEnd(agent, sent)).finished;
    }),
  );
}

test('three workers with a limit of 4: the endpoint never has more than 4 calls at once while 20 conversations run', async () => {
  const { model, agent } = await fleet(3, { AGENT_MODEL_MAX_CONCURRENT: '4' }, (index) => ({
    reply: { text: `answer ${index}` },
    holdMs: 100 + (index % 5) * 25,
  }));

  const finished = await askAll(agent, 20);

  expect(finished.map((run) => run.outcome)).toEqual(Array(20).fill('answered'));
  expect(model.requests).toBe(20);
  expect(model.peakInFlight).toBeLessThanOrEqual(4);
}, 180_000);

test('a lease held by a worker killed mid-call comes back, and the conversations behind it go on', async () => {
  const { model, agent, env } = await fleet(
    1,
    { AGENT_MODEL_MAX_CONCURRENT: '1', AGENT_MODEL_LEASE_TTL_MS: '2000' },
    // The first call never gets its answer: its worker dies holding the only lease.
    (index) => (index === 0 ? { hang: true } : answered(`answer ${index}`)),
  );
  const first = workers.at(-1)!;
  const stuck = await agent.send(`fleet-${randomUUID()}`, 'first');
  await waitFor(
    async () => (model.inFlight === 1 ? true : undefined),
    'the first call to reach the endpoint',
  );
  workers.push(await spawnWorkerProcess(env));
  await killWorkerProcess(first);
  const behind = await agent.send(`fleet-${randomUUID()}`, 'second');

  // Both need the lease: the retried first call on the new worker, and the second conversation's call.
  expect((await followToEnd(agent, stuck)).finished.outcome).toBe('answered');
  expect((await followToEnd(agent, behind)).finished.outcome).toBe('answered');
  expect(model.requests).toBe(3);
}, 180_000);

test('a 429 storm pauses the whole fleet: a bounded number of requests reach the endpoint, then every conversation is answered', async () => {
  let stormEndsAt = Number.POSITIVE_INFINITY;
  let stormRequests = 0;
  const { model, agent } = await fleet(3, { AGENT_MODEL_MAX_CONCURRENT: '4' }, (index) => {
    if (Date.now() >= stormEndsAt) return { reply: { text: `answer ${index}` }, holdMs: 50 };
    stormRequests++;
    return { reply: { status: 429, error: 'slow down' }, holdMs: 50 };
  });
  stormEndsAt = Date.now() + 6_000;

  const finished = await askAll(agent, 10);

  expect(finished.map((run) => run.outcome)).toEqual(Array(10).fill('answered'));
  // The first wave (at most 4 at once) and one probe after each pause (1 s, 2 s, 4 s, …); without the
  // limiter each conversation retries on its own (30 requests when this was written).
  expect(stormRequests).toBeLessThanOrEqual(4 + 4);
  expect(model.requests).toBe(stormRequests + 10);
}, 180_000);

test('a call that streams longer than the lease lasts keeps its lease: the next call waits until it ends', async () => {
  const firstCall = gate();
  const { model, agent } = await fleet(
    1,
    { AGENT_MODEL_MAX_CONCURRENT: '1', AGENT_MODEL_LEASE_TTL_MS: '3000' },
    // The first call streams its first words, then the rest only when the test says.
    (index) =>
      index === 0
        ? { reply: { text: 'A long answer, streamed slowly.' }, holdMs: 0, restAfter: firstCall.opened }
        : answered(`answer ${index}`),
  );
  const first = await agent.send(`fleet-${randomUUID()}`, 'first');
  await waitFor(async () => (model.inFlight === 1 ? true : undefined), 'the first call to stream');
  const second = await agent.send(`fleet-${randomUUID()}`, 'second');
  const limiter = limiterOf(model);
  await waitFor(
    async () => ((await limiter.query(modelLimiterStatusQuery)).waiting === 1 ? true : undefined),
    'the second call to wait for the lease',
  );

  // While a call waits, the limiter wakes whenever the lease would expire unrenewed (a timer to its
  // expiry): three such moments pass, each at least the lease's time to live after it was granted.
  const expiryChecks = async () =>
    ((await limiter.fetchHistory()).events ?? []).filter((event) => event.timerFiredEventAttributes).length;
  const checksBefore = await expiryChecks();
  await waitFor(
    async () => (model.requests > 1 || (await expiryChecks()) >= checksBefore + 3 ? true : undefined),
    'the limiter to look at the first lease three times, or the second call to reach the endpoint',
  );
  expect(model.requests).toBe(1);
  expect(await limiter.query(modelLimiterStatusQuery)).toMatchObject({ held: 1, waiting: 1 });

  firstCall.open();
  expect((await followToEnd(agent, first)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'A long answer, streamed slowly.',
  });
  expect((await followToEnd(agent, second)).finished.outcome).toBe('answered');
  expect(model.requests).toBe(2);
  expect(model.peakInFlight).toBe(1);
}, 180_000);

/** The most of `times` (epoch ms) that fall within any `windowMs` (from one of them, that one included). */
function mostWithin(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return Math.max(
    0,
    ...sorted.map((start, i) => sorted.slice(i).filter((time) => time < start + windowMs).length),
  );
}

test('two workers with a rate of one call per 2 s: in no 2 s do more calls start at the endpoint than one granted then and one granted before it', async () => {
  const { model, agent } = await fleet(2, { AGENT_MODEL_MAX_RPS: '0.5' }, (index) => ({
    reply: { text: `answer ${index}` },
    holdMs: 100,
  }));

  const finished = await askAll(agent, 5);

  expect(finished.map((run) => run.outcome)).toEqual(Array(5).fill('answered'));
  expect(model.requests).toBe(5);
  // The limiter grants a lease every 2 s at most. A request leaves some time after its grant, so one
  // granted earlier but sent later may share a window with the next: two at most, never all at once.
  expect(mostWithin(model.arrivals, 2_000)).toBeLessThanOrEqual(2);
}, 180_000);

test("the limiter's hand-over to a new run keeps the lease held and the calls waiting", async () => {
  const firstCall = gate();
  const { model, agent, env } = await fleet(
    1,
    { AGENT_MODEL_MAX_CONCURRENT: '1', AGENT_MODEL_LEASE_TTL_MS: '3000' },
    (index) =>
      index === 0
        ? { reply: { text: 'First, streamed slowly.' }, holdMs: 0, restAfter: firstCall.opened }
        : answered(`answer ${index}`),
  );
  // Started before any call, so it continues as new every 60 events instead of when Temporal suggests.
  const limiter = limiterOf(model);
  const input: ModelLimiterInput = {
    limits: { maxConcurrent: 1, leaseTtlMs: 3_000 },
    maxHistoryEvents: 60,
  };
  await client.workflow.start(MODEL_LIMITER_WORKFLOW_TYPE, {
    workflowId: limiter.workflowId,
    taskQueue: env.TASK_QUEUE!,
    args: [input],
  });
  const first = await agent.send(`fleet-${randomUUID()}`, 'first');
  await waitFor(async () => (model.inFlight === 1 ? true : undefined), 'the first call to stream');
  const second = await agent.send(`fleet-${randomUUID()}`, 'second');
  const third = await agent.send(`fleet-${randomUUID()}`, 'third');
  await waitFor(
    async () => ((await limiter.query(modelLimiterStatusQuery)).waiting === 2 ? true : undefined),
    'the second and third calls to wait for the lease',
  );
  const before = (await limiter.describe()).runId;

  // The first call's renewals grow the limiter's history until it continues as new.
  const after = await waitFor(async () => {
    const { runId, status } = await limiter.describe();
    return runId !== before && status.name === 'RUNNING' ? runId : undefined;
  }, 'the limiter to continue as new');
  const nextRun = client.workflow.getHandle(limiter.workflowId, after);
  expect(
    await waitFor(
      () => nextRun.query(modelLimiterStatusQuery).catch(() => undefined),
      'the new run to answer',
    ),
  ).toMatchObject({ held: 1, waiting: 2 });
  expect(model.requests).toBe(1);

  firstCall.open();
  for (const sent of [first, second, third]) {
    expect((await followToEnd(agent, sent)).finished.outcome).toBe('answered');
  }
  expect(model.requests).toBe(3);
  expect(model.peakInFlight).toBe(1);
}, 180_000);
