import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { temporal } from '@temporalio/proto';
import { LOCAL_TOOL_ATTEMPT_MS } from '../src/shared/liveness';
import { approveUpdate, pendingApprovalsQuery, steerUpdate } from '../src/shared/conversation-api';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { eventTimeMs } from './support/history';
import { directiveText } from './support/model-server';
import type { ToolReport } from './support/protocol';
import { type Stack, durableStack } from './support/stacks';
import { type Summary, summarize, table } from './support/stats';
import type { WorkerProcess } from './support/worker-process';

const EventType = temporal.api.enums.v1.EventType;

export interface ControlLatencyResult {
  samples: number;
  approve: {
    /** `approve` update sent to the tool's first line running (tool's own clock). */
    toToolStartMs: Summary;
    /** The update's round trip: sent to accepted and handled. */
    updateRoundTripMs: Summary;
  };
  steer: {
    /** How long after the tool started the steer was sent: spread evenly over 0.1 to 1.1 s. */
    delaysMs: number[];
    /** `steer` update sent to the tool seeing its AbortSignal fire. */
    toToolAbortMs: Summary;
    /** `steer` update sent to the next model call being scheduled (the run went on; server clock). */
    toNextModelCallMs: Summary;
    updateRoundTripMs: Summary;
  };
  /**
   * The same with a local tool (as `read` is), steered 0 to 0.2 s after it started: in its first
   * LOCAL_TOOL_ATTEMPT_MS it runs inside the conversation's workflow task, which a steer cannot
   * enter, then as an activity. To the tool's last attempt stopping (its attempt in the task is
   * cut off at its bound; one started after the steer is cancelled).
   */
  localSteer: {
    delaysMs: number[];
    toToolStopMs: Summary;
    /** The samples steered while the call still ran in the workflow task. */
    withinAttemptToToolStopMs: Summary;
    toNextModelCallMs: Summary;
  };
  /**
   * The same with the conversation's workflow, its tools and this client in three processes (a
   * workflows-only worker and an activities-only worker, each with its push endpoint).
   */
  apart: {
    approveToToolStartMs: Summary;
    steerToToolAbortMs: Summary;
    steerToNextModelCallMs: Summary;
  };
  table: string;
}

function nextReport(
  worker: WorkerProcess,
  match: (report: ToolReport) => boolean,
  timeoutMs = 30_000,
): Promise<ToolReport> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`no tool report in time (seen: ${JSON.stringify(seen.slice(-5))})`));
    }, timeoutMs);
    const seen: ToolReport[] = [];
    const stop = worker.onTool((report) => {
      seen.push(report);
      if (!match(report)) return;
      clearTimeout(timer);
      stop();
      resolve(report);
    });
  });
}

/**
 * Bench 4: how fast a person's decision reaches a tool. Approve: a conversation that asks before
 * every `probe` call (`approval.tools.probe: 'always'`); once the call is pending, the `approve`
 * update is sent and the probe reports when it starts. Steer: while the `wait` tool runs, the
 * `steer` update is sent and the tool reports when its AbortSignal fires.
 */
export async function controlLatency(context: BenchContext): Promise<ControlLatencyResult> {
  const samples = context.quick ? 5 : 20;
  const stack = durableStack(context);
  const together = await (async () => {
    const taskQueue = `bench-control-${randomUUID()}`;
    const worker = await stack.startWorker(taskQueue);
    try {
      const control = await measureControl(context, stack, taskQueue, worker, samples);
      // A local tool's first attempt runs on the worker running the workflow, so only here.
      return { ...control, local: await measureLocalSteer(context, stack, taskQueue, worker, samples) };
    } finally {
      await worker.stop();
    }
  })();
  // The fleet's shape: the conversation on one worker, its tools on another, the client in this process.
  context.log('  workflow, tools and client in three processes ...');
  const apart = await (async () => {
    const taskQueue = `bench-control-apart-${randomUUID()}`;
    const workflows = await stack.startWorker(taskQueue, {
      BENCH_SERVES: 'workflows',
      BENCH_LIVE_ENDPOINT: '1',
    });
    const tools = await stack.startWorker(taskQueue, {
      BENCH_SERVES: 'activities',
      BENCH_LIVE_ENDPOINT: '1',
    });
    try {
      return await measureControl(context, stack, taskQueue, tools, samples);
    } finally {
      await tools.stop();
      await workflows.stop();
    }
  })();
  const { toStart, approveRoundTrip, delays, toAbort, toNextModel, steerRoundTrip, local } = together;
  const result: ControlLatencyResult = {
    samples,
    approve: { toToolStartMs: summarize(toStart), updateRoundTripMs: summarize(approveRoundTrip) },
    steer: {
      delaysMs: delays,
      toToolAbortMs: summarize(toAbort),
      toNextModelCallMs: summarize(toNextModel),
      updateRoundTripMs: summarize(steerRoundTrip),
    },
    localSteer: {
      delaysMs: local.delays,
      toToolStopMs: summarize(local.toStop),
      withinAttemptToToolStopMs: summarize(
        local.toStop.filter((_, at) => local.delays[at]! < LOCAL_TOOL_ATTEMPT_MS),
      ),
      toNextModelCallMs: summarize(local.toNextModel),
    },
    apart: {
      approveToToolStartMs: summarize(apart.toStart),
      steerToToolAbortMs: summarize(apart.toAbort),
      steerToNextModelCallMs: summarize(apart.toNextModel),
    },
    table: '',
  };
  const row = (label: string, summary: Summary) => [label, summary.median, summary.p95, summary.max];
  result.table = table(
    ['control (durable-agent)', 'median ms', 'p95 ms', 'max ms'],
    [
      row('approve update sent -> tool starts', result.approve.toToolStartMs),
      row('approve update round trip', result.approve.updateRoundTripMs),
      row('steer update sent -> tool sees abort', result.steer.toToolAbortMs),
      row('steer update sent -> next model call scheduled', result.steer.toNextModelCallMs),
      row('steer update round trip', result.steer.updateRoundTripMs),
      row('steer sent -> a local tool stops (steered 0-200 ms in)', result.localSteer.toToolStopMs),
      row(
        `  of those, steered in its first ${LOCAL_TOOL_ATTEMPT_MS} ms (in the workflow task)`,
        result.localSteer.withinAttemptToToolStopMs,
      ),
      row('steer sent -> next model call (local tool)', result.localSteer.toNextModelCallMs),
      row('three processes: approve sent -> tool starts', result.apart.approveToToolStartMs),
      row('three processes: steer sent -> tool sees abort', result.apart.steerToToolAbortMs),
      row('three processes: steer sent -> next model call', result.apart.steerToNextModelCallMs),
    ],
  );
  return result;
}

interface ControlSamples {
  toStart: number[];
  approveRoundTrip: number[];
  delays: number[];
  toAbort: number[];
  toNextModel: number[];
  steerRoundTrip: number[];
}

interface LocalSteerSamples {
  delays: number[];
  toStop: number[];
  toNextModel: number[];
}

/** Approve and steer `samples` times each on `taskQueue`, the tools running on `worker`. */
async function measureControl(
  context: BenchContext,
  stack: Stack,
  taskQueue: string,
  worker: WorkerProcess,
  samples: number,
): Promise<ControlSamples> {
  context.log('  approve ...');
  const approving = await DrivenConversation.start(context, stack, `approve-${randomUUID()}`, taskQueue, {
    approval: { tools: { probe: 'always' } },
  });
  await approving.runTurn();
  const handle = stack.client.workflow.getHandle(approving.id);
  const toStart: number[] = [];
  const approveRoundTrip: number[] = [];
  for (let i = 0; i < samples; i++) {
    const turn = await approving.send({ tool: 'probe' });
    let pending = await handle.query(pendingApprovalsQuery);
    const deadline = Date.now() + 30_000;
    while (pending.length === 0) {
      if (Date.now() > deadline) throw new Error('the probe call never waited for approval');
      await sleep(10);
      pending = await handle.query(pendingApprovalsQuery);
    }
    const toolCallId = pending[0]!.toolCallId;
    const started = nextReport(
      worker,
      (report) => report.event === 'start' && report.toolCallId === toolCallId,
    );
    const sent = preciseNow();
    await handle.executeUpdate(approveUpdate, {
      args: [{ toolCallId, decision: 'allow_once', by: 'bench' }],
    });
    approveRoundTrip.push(preciseNow() - sent);
    toStart.push((await started).at - sent);
    await approving.finished(turn);
  }

  context.log('  steer ...');
  const steering = await DrivenConversation.start(context, stack, `steer-${randomUUID()}`, taskQueue);
  await steering.runTurn();
  const steerHandle = stack.client.workflow.getHandle(steering.id);
  const delays: number[] = [];
  const toAbort: number[] = [];
  const toNextModel: number[] = [];
  const steerRoundTrip: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = nextReport(worker, (report) => report.event === 'start' && report.tool === 'wait');
    await steering.send({ tool: 'wait' });
    const start = await started;
    const delay = 100 + Math.round((1_000 * i) / samples);
    delays.push(delay);
    await sleep(delay);
    const aborted = nextReport(
      worker,
      (report) => report.event === 'abort' && report.toolCallId === start.toolCallId,
    );
    const steerTurn = steering.reserveTurn();
    const sent = preciseNow();
    await steerHandle.executeUpdate(steerUpdate, {
      args: [{ text: directiveText({ c: steering.id, t: steerTurn }), messageId: randomUUID() }],
    });
    steerRoundTrip.push(preciseNow() - sent);
    toAbort.push((await aborted).at - sent);
    // The run goes on: the model is called again, with the tool's (aborted) result and the steering message.
    const next = nextModelCallMs(await steering.finished(steerTurn));
    if (next !== undefined) toNextModel.push(next - sent);
  }
  return { toStart, approveRoundTrip, delays, toAbort, toNextModel, steerRoundTrip };
}

/** The next model call's scheduling in a finished turn's events (server clock). */
function nextModelCallMs(events: Awaited<ReturnType<DrivenConversation['finished']>>): number | undefined {
  const models = events.filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  const next = models[models.length - 1];
  return next ? eventTimeMs(next) : undefined;
}

/**
 * Steer `samples` times while `wait_local` runs, 0 to 0.2 s after its first attempt started, and
 * time until its last attempt stopped: the attempt in the workflow task stops at its bound, the
 * activity that takes over stops when the steer's cancel reaches it (or never starts).
 */
async function measureLocalSteer(
  context: BenchContext,
  stack: Stack,
  taskQueue: string,
  worker: WorkerProcess,
  samples: number,
): Promise<LocalSteerSamples> {
  context.log('  steer a local tool ...');
  const steering = await DrivenConversation.start(context, stack, `steer-local-${randomUUID()}`, taskQueue);
  await steering.runTurn();
  const handle = stack.client.workflow.getHandle(steering.id);
  const delays: number[] = [];
  const toStop: number[] = [];
  const toNextModel: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = nextReport(worker, (report) => report.event === 'start' && report.tool === 'wait_local');
    await steering.send({ tool: 'wait_local' });
    const start = await started;
    const stops: number[] = [];
    const stopListening = worker.onTool((report) => {
      if (report.event === 'abort' && report.toolCallId === start.toolCallId) stops.push(report.at);
    });
    const delay = Math.round((200 * i) / samples);
    delays.push(delay);
    await sleep(Math.max(0, start.at + delay - preciseNow()));
    const steerTurn = steering.reserveTurn();
    const sent = preciseNow();
    await handle.executeUpdate(steerUpdate, {
      args: [{ text: directiveText({ c: steering.id, t: steerTurn }), messageId: randomUUID() }],
    });
    const events = await steering.finished(steerTurn);
    stopListening();
    toStop.push(Math.max(0, Math.max(...stops) - sent));
    const next = nextModelCallMs(events);
    if (next !== undefined) toNextModel.push(next - sent);
  }
  return { delays, toStop, toNextModel };
}
