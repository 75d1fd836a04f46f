import { randomUUID } from 'node:crypto';
import { type BenchContext, serversToMeasure } from './support/context';
import type { Directive } from './support/model-server';
import { durableStack } from './support/stacks';
import { type Summary, summarize, table } from './support/stats';
import type { WorkerProcess } from './support/worker-process';

export interface CrashRecoveryResult {
  samples: number;
  /**
   * SIGKILL of the worker running the step to the step's next attempt starting on the other worker,
   * on the embedded server.
   */
  recoverySeconds: Record<CrashCase, Summary>;
  /** The same on the self-hosted cluster, when the run has one. */
  cluster?: { recoverySeconds: Record<CrashCase, Summary> };
  table: string;
}

type CrashCase = 'model call' | 'file tool' | 'command';

/** What each case asks for, and the tool whose start is the step (none: the model request). */
const CASES: Record<CrashCase, { directive: Omit<Directive, 'c' | 't'>; tool?: string }> = {
  'model call': { directive: { holdMs: 120_000 } },
  'file tool': { directive: { tool: 'wait_file' }, tool: 'wait_file' },
  command: { directive: { tool: 'wait_command' }, tool: 'wait_command' },
};

/**
 * Bench 8: how long a conversation stands still when the worker running its step is SIGKILLed.
 * Two workers serve the task queue; the step (a model call the model server holds, a file tool, a
 * command, each waiting) starts on one of them, that worker is killed, and the time is taken until
 * the step's next attempt starts on the other: Temporal finds the dead worker only by the missed
 * heartbeats, so the heartbeat timeouts set it. A fresh worker replaces the killed one each time.
 * On the embedded server, then the same on the cluster when the run has one.
 */
export async function crashRecovery(context: BenchContext): Promise<CrashRecoveryResult> {
  const samples = context.quick ? 2 : 5;
  const measured: Array<{ suffix: string; recovery: Record<CrashCase, Summary> }> = [];
  for (const server of serversToMeasure(context)) {
    const recovery = await measureRecovery(server.context, samples, server.suffix);
    measured.push({ suffix: server.suffix, recovery });
  }
  const rows = measured.flatMap(({ suffix, recovery }) =>
    (Object.keys(CASES) as CrashCase[]).map((name) => [
      `${name}${suffix}`,
      recovery[name].median.toFixed(1),
      recovery[name].max.toFixed(1),
    ]),
  );
  // serversToMeasure lists the embedded server first.
  const [onEmbedded, onCluster] = measured;
  return {
    samples,
    recoverySeconds: onEmbedded!.recovery,
    ...(onCluster ? { cluster: { recoverySeconds: onCluster.recovery } } : {}),
    table: table(['worker killed during', 'to next attempt, median (s)', 'worst (s)'], rows),
  };
}

/** Every case's samples on the server of `context`; `suffix` labels its log lines. */
async function measureRecovery(
  context: BenchContext,
  samples: number,
  suffix: string,
): Promise<Record<CrashCase, Summary>> {
  const stack = durableStack(context);
  const taskQueue = `bench-crash-${randomUUID()}`;
  const workers: WorkerProcess[] = await Promise.all([0, 1].map(() => stack.startWorker(taskQueue)));
  const recovery = {} as Record<CrashCase, Summary>;
  try {
    for (const [name, { directive, tool }] of Object.entries(CASES) as Array<
      [CrashCase, (typeof CASES)[CrashCase]]
    >) {
      const seconds: number[] = [];
      for (let sample = 0; sample < samples; sample++) {
        const id = `crash-${randomUUID()}`;
        await stack.startConversation(id, taskQueue, { approval: { mode: 'auto' } });
        // Attempts of the step as they start: by the model server, or by the tool's own report.
        const starts: number[] = [];
        const stop = tool
          ? workers.map((worker) =>
              worker.onTool(
                (report) => report.tool === tool && report.event === 'start' && starts.push(Date.now()),
              ),
            )
          : [];
        context.model.onRequest = (seen) => {
          if (!tool && seen.c === id && seen.t === 1) starts.push(Date.now());
        };
        try {
          await stack.send(id, { c: id, t: 1, ...directive });
          await until(() => starts.length >= 1, 30_000, `the ${name} to start`);
          const victim = await runningOn(stack.client, id, workers);
          const killedAt = Date.now();
          process.kill(victim.pid, 'SIGKILL');
          await until(() => starts.length >= 2, 120_000, `the ${name} to start again`);
          seconds.push((starts[1]! - killedAt) / 1_000);
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
      recovery[name] = summarize(seconds);
      context.log(`  ${name}${suffix}: ${seconds.map((s) => s.toFixed(1)).join(' s, ')} s`);
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
