import { randomUUID } from 'node:crypto';
import { type BenchContext, serversToMeasure } from './support/context';
import type { Directive } from './support/model-server';
import { durableStack } from './support/stacks';
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

type CrashCase = 'model call' | 'file tool' | 'command';

/**
 * What each case asks for, and the tool whose start is the step (none: the model request). Files
 * are read again when cut off; a command, which may have had side effects, is not.
 */
const CASES: Record<CrashCase, { directive: Omit<Directive, 'c' | 't'>; tool?: string }> = {
  'model call': { directive: { holdMs: 120_000, tool: 'noop' } },
  'file tool': { directive: { tool: 'wait_file' }, tool: 'wait_file' },
  command: { directive: { tool: 'wait_command' }, tool: 'wait_command' },
};

/**
 * Bench 8: how long a conversation stands still when the worker running its step is SIGKILLed.
 * Two workers serve the task queue; the step (a model call the model server holds, a file tool, a
 * command, each waiting) starts on one of them, that worker is killed, and two times are taken: until
 * the step's next attempt starts on the other (for steps tried again), and until the conversation's
 * next step reaches the model. Temporal finds the dead worker only by the missed heartbeats; the
 * workflow task that follows goes first to the worker that held the conversation, which may be the
 * dead one. A fresh worker replaces the killed one each time. On the embedded server, then the same
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
  const workers: WorkerProcess[] = await Promise.all([0, 1].map(() => stack.startWorker(taskQueue)));
  const recovery = {} as Record<CrashCase, CaseRecovery>;
  try {
    for (const [name, { directive, tool }] of Object.entries(CASES) as Array<
      [CrashCase, (typeof CASES)[CrashCase]]
    >) {
      const again: number[] = [];
      const next: number[] = [];
      for (let sample = 0; sample < samples; sample++) {
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
          workers[workers.indexOf(victim)] = await stack.startWorker(taskQueue);
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
