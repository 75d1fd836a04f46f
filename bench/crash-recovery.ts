import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { type BenchContext, serversToMeasure } from './support/context';
import type { Directive } from './support/model-server';
import { type Stack, durableStack } from './support/stacks';
import { type Summary, summarize, table } from './support/stats';
import type { WorkerProcess } from './support/worker-process';

export interface CrashRecoveryResult {
  samples: number;
  /** On the embedded server, per case. */
  recoverySeconds: Record<CrashCase, CaseRecovery>;
  /** The same on the self-hosted cluster, when the run has one. */
  cluster?: { recoverySeconds: Record<CrashCase, CaseRecovery> };
  table: string;
}

/** Seconds from the SIGKILL of the worker running the step. */
interface CaseRecovery {
  /** To the step's next attempt starting on the other worker (a step that is tried again). */
  stepAgain?: Summary;
  /**
   * To the conversation's next step, as the model sees it: its next request after the step (after
   * the model call's answer has run its `noop` tool; after the tool's result or the report that
   * the command was cut off).
   */
  nextStep: Summary;
}

type CrashCase = 'model call' | 'file tool' | 'command' | 'workflow task';

/**
 * What each case asks for, and the tool whose start is the step (none: the model request). Files
 * are read again when cut off; a command, which may have had side effects, is not.
 */
const CASES: Record<CrashCase, { directive: Omit<Directive, 'c' | 't'>; tool?: string }> = {
  'model call': { directive: { holdMs: 120_000, tool: 'noop' } },
  'file tool': { directive: { tool: 'wait_file' }, tool: 'wait_file' },
  command: { directive: { tool: 'wait_command' }, tool: 'wait_command' },
  // The step is the workflow task that takes a message: measured by measureTaskKill.
  'workflow task': { directive: {} },
};

/**
 * Bench 8: how long a conversation stands still when the worker running its step is SIGKILLed.
 * Two workers serve the task queue; the step (a model call the model server holds, a file tool, a
 * command, each waiting) starts on one of them, that worker is killed, and two times are taken: until
 * the step's next attempt starts on the other (for steps tried again), and until the conversation's
 * next step reaches the model. Temporal finds the dead worker only by the missed heartbeats; the
 * workflow task that follows goes first to the worker that held the conversation, which may be the
 * dead one. A kill during a workflow task is found only when that task times out. A fresh worker replaces the killed one each time. On the embedded server, then the same
 * on the cluster when the run has one.
 */
export async function crashRecovery(context: BenchContext): Promise<CrashRecoveryResult> {
  const samples = context.quick ? 2 : 5;
  const measured: Array<{ suffix: string; recovery: Record<CrashCase, CaseRecovery> }> = [];
  for (const server of serversToMeasure(context)) {
    const recovery = await measureRecovery(server.context, samples, server.suffix);
    measured.push({ suffix: server.suffix, recovery });
  }
  const seconds = (summary: Summary | undefined, key: 'median' | 'max') =>
    summary ? summary[key].toFixed(1) : '-';
  const rows = measured.flatMap(({ suffix, recovery }) =>
    (Object.keys(CASES) as CrashCase[]).map((name) => [
      `${name}${suffix}`,
      seconds(recovery[name].stepAgain, 'median'),
      seconds(recovery[name].nextStep, 'median'),
      seconds(recovery[name].nextStep, 'max'),
    ]),
  );
  // serversToMeasure lists the embedded server first.
  const [onEmbedded, onCluster] = measured;
  return {
    samples,
    recoverySeconds: onEmbedded!.recovery,
    ...(onCluster ? { cluster: { recoverySeconds: onCluster.recovery } } : {}),
    table: table(
      [
        'worker killed during',
        'step again, median (s)',
        "conversation's next step, median (s)",
        'next step, worst (s)',
      ],
      rows,
    ),
  };
}

/** Every case's samples on the server of `context`; `suffix` labels its log lines. */
async function measureRecovery(
  context: BenchContext,
  samples: number,
  suffix: string,
): Promise<Record<CrashCase, CaseRecovery>> {
  const stack = durableStack(context);
  const taskQueue = `bench-crash-${randomUUID()}`;
  const startWorker = () => stack.startWorker(taskQueue, { BENCH_STALL_MARKED_TASKS: '1' });
  const workers: WorkerProcess[] = await Promise.all([0, 1].map(startWorker));
  const recovery = {} as Record<CrashCase, CaseRecovery>;
  try {
    for (const [name, { directive, tool }] of Object.entries(CASES) as Array<
      [CrashCase, (typeof CASES)[CrashCase]]
    >) {
      const again: number[] = [];
      const next: number[] = [];
      for (let sample = 0; sample < samples; sample++) {
        if (name === 'workflow task') {
          next.push(await measureTaskKill(context, stack, taskQueue, workers, startWorker));
          continue;
        }
        const id = `crash-${randomUUID()}`;
        await stack.startConversation(id, taskQueue, { approval: { mode: 'auto' } });
        // The model's requests for this conversation, and the tool's attempts as they start.
        const requests: number[] = [];
        const toolStarts: number[] = [];
        const stop = tool
          ? workers.map((worker) =>
              worker.onTool(
                (report) => report.tool === tool && report.event === 'start' && toolStarts.push(Date.now()),
              ),
            )
          : [];
        context.model.onRequest = (seen) => {
          if (seen.c === id) requests.push(Date.now());
        };
        // The step's attempts; after the step, the model's next request.
        const starts = tool ? toolStarts : requests;
        const nextStepAt = () => (tool ? requests[1] : requests[2]);
        try {
          await stack.send(id, { c: id, t: 1, ...directive });
          await until(() => starts.length >= 1, 30_000, `the ${name} to start`);
          const victim = await runningOn(stack.client, id, workers);
          const killedAt = Date.now();
          process.kill(victim.pid, 'SIGKILL');
          await until(() => nextStepAt() !== undefined, 120_000, `the step after the ${name}`);
          if (starts.length >= 2) again.push((starts[1]! - killedAt) / 1_000);
          next.push((nextStepAt()! - killedAt) / 1_000);
          workers[workers.indexOf(victim)] = await startWorker();
        } finally {
          for (const unsubscribe of stop) unsubscribe();
          context.model.onRequest = undefined;
          await stack.client.workflow
            .getHandle(id)
            .terminate('bench sample done')
            .catch(() => undefined);
        }
      }
      recovery[name] = {
        ...(again.length === samples ? { stepAgain: summarize(again) } : {}),
        nextStep: summarize(next),
      };
      const list = (values: number[]) => values.map((value) => value.toFixed(1)).join(' s, ');
      context.log(
        `  ${name}${suffix}: next step ${list(next)} s${again.length ? `; step again ${list(again)} s` : ''}`,
      );
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.stop().catch(() => undefined)));
  }
  return recovery;
}

/**
 * One sample of a kill during a workflow task, in seconds from the kill to the model's request for
 * the message that task was taking in. The conversation answers a first message, so one worker holds
 * it (its sticky queue gets the next task); the next message names that worker, whose stalling codec
 * then holds the task open; the worker is killed as soon as the server shows the task started.
 */
async function measureTaskKill(
  context: BenchContext,
  stack: Stack,
  taskQueue: string,
  workers: WorkerProcess[],
  startWorker: () => Promise<WorkerProcess>,
): Promise<number> {
  const id = `crash-${randomUUID()}`;
  const handle = stack.client.workflow.getHandle(id);
  const requests: number[] = [];
  context.model.onRequest = (seen) => {
    if (seen.c === id) requests.push(Date.now());
  };
  try {
    await stack.startConversation(id, taskQueue, { approval: { mode: 'auto' } });
    await stack.send(id, { c: id, t: 1 });
    await until(() => requests.length >= 1, 30_000, 'the first answer');
    const holder = await settledOn(handle, workers);
    await stack.send(id, { c: id, t: 2, stallTaskOf: holder.pid });
    const STARTED = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED;
    const deadline = Date.now() + 30_000;
    while ((await handle.describe()).raw.pendingWorkflowTask?.state !== STARTED) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the workflow task to start');
    }
    const killedAt = Date.now();
    process.kill(holder.pid, 'SIGKILL');
    await until(() => requests.length >= 2, 120_000, 'the message after the killed workflow task');
    workers[workers.indexOf(holder)] = await startWorker();
    return (requests[1]! - killedAt) / 1_000;
  } finally {
    context.model.onRequest = undefined;
    await handle.terminate('bench sample done').catch(() => undefined);
  }
}

/**
 * The worker that completed the conversation's last workflow task, once nothing of it is pending:
 * the conversation's next task goes to that worker's sticky queue.
 */
async function settledOn(handle: WorkflowHandle, workers: WorkerProcess[]): Promise<WorkerProcess> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const { raw } = await handle.describe();
    if (!raw.pendingWorkflowTask && !raw.pendingActivities?.length) {
      const { events } = await handle.fetchHistory();
      const identity = (events ?? [])
        .map((event) => event.workflowTaskCompletedEventAttributes?.identity)
        .filter(Boolean)
        .at(-1);
      const worker = workers.find((candidate) => candidate.pid === Number(identity?.split('@')[0]));
      if (worker) return worker;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${handle.workflowId} did not settle on a worker of this bench`);
}

/** The worker whose process runs the conversation's pending activity (its identity is `pid@host`). */
async function runningOn(
  client: BenchContext['durableClient'],
  id: string,
  workers: WorkerProcess[],
): Promise<WorkerProcess> {
  for (let tries = 0; tries < 100; tries++) {
    const pending = (await client.workflow.getHandle(id).describe()).raw.pendingActivities ?? [];
    for (const activity of pending) {
      const pid = Number(activity.lastWorkerIdentity?.split('@')[0]);
      const worker = workers.find((candidate) => candidate.pid === pid);
      if (worker) return worker;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no worker of this bench runs ${id}'s pending activity`);
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
