import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { preciseNow } from './clock';
import { type Summary, summarize } from './stats';

export interface DispatchProbe {
  /** The first `fresh` round trips on a new connection. */
  fresh: Summary;
  /** The round trips after those. */
  warm: Summary;
}

/**
 * The server's own dispatch time, with no SDK worker: a plain gRPC client long-polls a workflow
 * task queue, then starts a workflow on it and times until the poll returns its task. Each round
 * trip starts 5 ms after the previous one ended, as a busy worker's would.
 */
export async function probeDispatch(
  connection: Connection,
  samples = 60,
  fresh = 15,
): Promise<DispatchProbe> {
  const taskQueue = `bench-dispatch-${randomUUID()}`;
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const polled = connection
      .withDeadline(Date.now() + 30_000, () =>
        connection.workflowService.pollWorkflowTaskQueue({
          namespace: 'default',
          taskQueue: { name: taskQueue },
          identity: 'bench-dispatch-probe',
        }),
      )
      .then(() => preciseNow());
    // Lets the poll reach the server and wait there.
    await sleep(5);
    const sent = preciseNow();
    await connection.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId: `${taskQueue}-${i}`,
      workflowType: { name: 'probe' },
      taskQueue: { name: taskQueue },
      requestId: randomUUID(),
    });
    times.push((await polled) - sent);
  }
  return { fresh: summarize(times.slice(0, fresh)), warm: summarize(times.slice(fresh)) };
}
