import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AgentClient } from '../src/client/agent-client';
import type { RunToFollow } from '../src/client/agent-client';
import { modelLimiterStatusQuery, modelLimiterWorkflowId } from '../src/shared/model-limiter';
import { SPAWN_TOOL_NAME } from '../src/shared/sub-agents';
import { modelEndpointKey } from '../src/worker/model-limit-settings';
import { preciseNow } from './support/clock';
import { type BenchContext, withServer } from './support/context';
import { type Reply, sseBody, textOfContent } from './support/model-server';
import { type HistoryEvent, eventTimeMs } from './support/history';
import { type Summary, round, summarize, table } from './support/stats';
import { type WorkerProcess, startWorkerProcess } from './support/worker-process';

/** What a model call takes at the endpoint: the tree is bound by the model, not by this machine's CPU. */
const HOLD_MS = 500;
const LIMIT = 4;
const WORKERS = 2;
/** The big tree: 20 sub-agents that start 24 each, 500 in all. */
const TREE = [20, 24];

interface TreeModel {
  baseUrl: string;
  /** Model calls of the big tree answered so far. */
  treeCalls: number;
  /** When the single conversation's latest request arrived (preciseNow). */
  singleArrivedAt: number;
  inFlight: number;
  peakInFlight: number;
  close(): Promise<void>;
}

/**
 * The endpoint the fleet shares: every request held HOLD_MS. A conversation whose first message is
 * `spawn:20,24` starts 20 sub-agents with the task `spawn:24`, and so on down; anything else (and
 * a call after tool results) is answered with text.
 */
async function startTreeModel(): Promise<TreeModel> {
  let callId = 0;
  const state = { treeCalls: 0, singleArrivedAt: 0, inFlight: 0, peakInFlight: 0 };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        model: string;
        messages: Array<{ role: string; content?: unknown }>;
      };
      state.inFlight++;
      state.peakInFlight = Math.max(state.peakInFlight, state.inFlight);
      const first = textOfContent(body.messages.find((message) => message.role === 'user')?.content);
      if (!first.startsWith('spawn:')) state.singleArrivedAt = preciseNow();
      const counts = first.startsWith('spawn:') ? first.slice(6).split(',').filter(Boolean) : [];
      let reply: Reply = { text: 'done' };
      if (body.messages.at(-1)?.role === 'user' && counts.length) {
        const task = `spawn:${counts.slice(1).join(',')}`;
        reply = {
          toolCalls: Array.from({ length: Number(counts[0]) }, () => ({
            id: `call_${(++callId).toString(36)}`,
            name: SPAWN_TOOL_NAME,
            arguments: JSON.stringify({ task }),
          })),
        };
      }
      setTimeout(() => {
        state.inFlight--;
        if (first.startsWith('spawn:')) state.treeCalls++;
        response.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseBody(reply, body.model));
      }, HOLD_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as TreeModel;
}

/** Model calls of the tree: each conversation that starts sub-agents calls twice, each leaf once. */
function treeModelCalls(counts: number[]): number {
  let conversations = 1;
  let calls = 0;
  for (const count of counts) {
    calls += conversations * 2;
    conversations *= count;
  }
  return calls + conversations;
}

function subAgentCount(counts: number[]): number {
  let level = 1;
  return counts.reduce((sum, count) => sum + (level *= count), 0);
}

/** One turn of the single conversation: how long it took, and how long its model request took to reach the endpoint. */
async function turn(
  agent: AgentClient,
  conversationId: string,
  model: TreeModel,
): Promise<{ turnMs: number; toModelMs: number }> {
  const started = preciseNow();
  const sent = await agent.send(conversationId, 'hello');
  await followToEnd(agent, sent, 20);
  return { turnMs: preciseNow() - started, toModelMs: model.singleArrivedAt - started };
}

async function followToEnd(agent: AgentClient, run: RunToFollow, pollMs: number): Promise<void> {
  const follow = agent.followRun(run, { pollMs });
  for (;;) {
    const next = await follow.next();
    if (next.done) {
      if (next.value.how !== 'finished') throw new Error(`the run did not finish: ${next.value.how}`);
      return;
    }
  }
}

/**
 * The latest `count` model activities of a conversation: how long each waited for a worker
 * (scheduled to started) and how long it ran (the lease wait and the call), server clock.
 */
async function modelActivityPhases(
  context: BenchContext,
  conversationId: string,
  count: number,
): Promise<{ queuedMs: number[]; ranMs: number[] }> {
  const history = await context.durableClient.workflow.getHandle(conversationId).fetchHistory();
  const events: HistoryEvent[] = history.events ?? [];
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const phases = events
    .filter((event) => event.activityTaskCompletedEventAttributes)
    .map((completed) => {
      const attributes = completed.activityTaskCompletedEventAttributes!;
      const scheduled = byId.get(Number(attributes.scheduledEventId));
      const started = byId.get(Number(attributes.startedEventId));
      return { scheduled, started, completed };
    })
    .filter(
      ({ scheduled }) => scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
    )
    .slice(-count);
  return {
    queuedMs: phases.map(({ scheduled, started }) => eventTimeMs(started!) - eventTimeMs(scheduled!)),
    ranMs: phases.map(({ started, completed }) => eventTimeMs(completed) - eventTimeMs(started!)),
  };
}

export interface FairnessResult {
  holdMs: number;
  limit: number;
  workers: number;
  subAgents: number;
  turns: number;
  aloneMs: Summary;
  besideMs: Summary;
  /** From sending the message to its model request reaching the endpoint. */
  aloneToModelMs: Summary;
  besideToModelMs: Summary;
  /** The beside turns' model activities: waiting for a worker, and running (lease wait and call). */
  besideActivityQueuedMs: Summary;
  besideActivityRanMs: Summary;
  ratio: number;
  /** The tree's model calls answered, and waiting at the limiter, when the turns beside it began. */
  treeCallsAtStart: number;
  waitingAtStart: number;
  /** The tree's model calls answered when the single conversation's last turn ended, of all it makes. */
  treeCallsDuringTurns: number;
  treeCalls: number;
  treeSeconds: number;
  peakInFlight: number;
  table: string;
}

/**
 * Bench 10: fairness under a fleet-wide model limit. Two worker processes share a limit of 4 model
 * calls at once on an endpoint that takes 500 ms a call; one conversation's turn latency alone, then
 * beside a conversation whose 500 sub-agents all wait for the model (measured once 100 of the
 * leaves' calls are answered, so what is measured is the queue, not the burst of starting them). On a
 * server of its own with `matching.enableFairness`, so backlogged activity tasks are dispatched per
 * fairness key too.
 */
export function fairness(context: BenchContext): Promise<FairnessResult> {
  return withServer(context, { 'matching.enableFairness': true }, (server) => measure(server));
}

async function measure(context: BenchContext): Promise<FairnessResult> {
  const turns = context.quick ? 4 : 8;
  const model = await startTreeModel();
  const taskQueue = `bench-fairness-${randomUUID()}`;
  const workers: WorkerProcess[] = [];
  try {
    for (let i = 0; i < WORKERS; i++) {
      workers.push(
        await startWorkerProcess(path.join(__dirname, 'support', 'agent-worker.ts'), {
          BENCH_TEMPORAL_ADDRESS: context.address,
          BENCH_TASK_QUEUE: taskQueue,
          BENCH_MODEL_URL: model.baseUrl,
          BENCH_WORKFLOW_BUNDLE: context.durableBundle,
          AGENT_MODEL_MAX_CONCURRENT: String(LIMIT),
          BENCH_SUB_AGENTS: '1',
        }),
      );
    }
    const agent = new AgentClient(context.durableClient, taskQueue);
    const limiter = context.durableClient.workflow.getHandle(
      modelLimiterWorkflowId(modelEndpointKey(model.baseUrl)),
    );
    const single = `fairness-single-${randomUUID()}`;
    await turn(agent, single, model); // the limiter and the workers' caches start
    const alone = [];
    for (let i = 0; i < turns; i++) alone.push(await turn(agent, single, model));

    const treeStarted = preciseNow();
    const tree = await agent.send(`fairness-tree-${randomUUID()}`, `spawn:${TREE.join(',')}`, {
      options: {
        subAgents: { maxDepth: TREE.length, maxPerRun: Math.max(...TREE) },
        approval: { mode: 'auto' },
      },
    });
    const total = treeModelCalls(TREE);
    // Bounded: the turns begin once every sub-agent has been started and 100 of the leaves' calls are
    // answered (the tree then queues for the model), or after two minutes regardless.
    while (model.treeCalls < 1 + TREE[0]! + 100 && preciseNow() - treeStarted < 120_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const treeCallsAtStart = model.treeCalls;
    const waitingAtStart = (await limiter.query(modelLimiterStatusQuery)).waiting;
    const beside = [];
    for (let i = 0; i < turns; i++) beside.push(await turn(agent, single, model));
    const treeCallsDuringTurns = model.treeCalls;
    const phases = await modelActivityPhases(context, single, turns);
    await followToEnd(agent, tree, 500);
    const treeSeconds = round((preciseNow() - treeStarted) / 1_000, 1);

    const aloneMs = summarize(alone.map((one) => one.turnMs));
    const besideMs = summarize(beside.map((one) => one.turnMs));
    const aloneToModelMs = summarize(alone.map((one) => one.toModelMs));
    const besideToModelMs = summarize(beside.map((one) => one.toModelMs));
    context.log(`  alone: median ${aloneMs.median} ms; beside the tree: median ${besideMs.median} ms`);
    const result: FairnessResult = {
      holdMs: HOLD_MS,
      limit: LIMIT,
      workers: WORKERS,
      subAgents: subAgentCount(TREE),
      turns,
      aloneMs,
      besideMs,
      aloneToModelMs,
      besideToModelMs,
      besideActivityQueuedMs: summarize(phases.queuedMs),
      besideActivityRanMs: summarize(phases.ranMs),
      ratio: round(besideMs.median / aloneMs.median),
      treeCallsAtStart,
      waitingAtStart,
      treeCallsDuringTurns,
      treeCalls: model.treeCalls,
      treeSeconds,
      peakInFlight: model.peakInFlight,
      table: '',
    };
    result.table = table(
      [
        'single conversation',
        'turns',
        'turn median ms',
        'p95 ms',
        'ratio to alone',
        'to the endpoint median ms',
      ],
      [
        ['alone', turns, aloneMs.median, aloneMs.p95, '1.00', aloneToModelMs.median],
        [
          `beside ${result.subAgents} sub-agents`,
          turns,
          besideMs.median,
          besideMs.p95,
          result.ratio.toFixed(2),
          besideToModelMs.median,
        ],
      ],
    );
    result.table +=
      `\n\nBeside: the turns began when ${treeCallsAtStart} of the tree's ${total} model calls had been answered ` +
      `(${waitingAtStart} waited at the limiter, the others on their workers) and ended when ${treeCallsDuringTurns} had. The tree: ${model.treeCalls} ` +
      `model calls in ${treeSeconds} s; the endpoint saw at most ${model.peakInFlight} calls at once ` +
      `(limit ${LIMIT}, ${WORKERS} workers, ${HOLD_MS} ms a call). The single conversation's model ` +
      `activities beside the tree waited ${result.besideActivityQueuedMs.median} ms (median) for a worker ` +
      `and ran ${result.besideActivityRanMs.median} ms (the lease wait and the ${HOLD_MS} ms call).`;
    return result;
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await model.close();
  }
}
