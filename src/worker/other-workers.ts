import { hostname } from 'node:os';
import { Connection, type WorkflowService } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { processAlive } from '../platform/process-alive';

/** A poller that asked for work this recently is alive (long polls last up to a minute). */
const ALIVE_WITHIN_MS = 70_000;

/**
 * Whether workers of other processes poll `taskQueue`: a server this process started must then
 * outlive it. The worker identity defaults to `<pid>@<host>`, which tells our own poller apart.
 */
export async function otherWorkersPoll(
  address: string,
  namespace: string,
  taskQueue: string,
): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2_000 });
  try {
    return await livePollersOf(connection.workflowService, namespace, taskQueue);
  } finally {
    await connection.close();
  }
}

/** Whether a worker of another process polls `taskQueue` for workflow tasks now, by what the server says of its pollers. */
export async function livePollersOf(
  service: WorkflowService,
  namespace: string,
  taskQueue: string,
): Promise<boolean> {
  const { pollers } = await service.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (pollers ?? []).some((poller) =>
    pollerAlive(poller.identity ?? '', Number(poller.lastAccessTime?.seconds ?? 0) * 1_000, {
      nowMs: Date.now(),
      ownPid: process.pid,
      host: hostname(),
      pidAlive: processAlive,
    }),
  );
}

/**
 * Whether a poller may still be serving: it polled within the last ALIVE_WITHIN_MS, is not this
 * process, and, when its identity names a process on this machine, that process still runs (a
 * worker that exited seconds ago still looks recent to the server, and would keep the embedded
 * server running after the last process that used it).
 */
export function pollerAlive(
  identity: string,
  lastAccessMs: number,
  here: { nowMs: number; ownPid: number; host: string; pidAlive: (pid: number) => boolean },
): boolean {
  if (lastAccessMs < here.nowMs - ALIVE_WITHIN_MS) return false;
  // `<pid>@<host>`, perhaps followed by the worker's push endpoint.
  const match = /^(\d+)@(\S*)/.exec(identity);
  if (!match) return true;
  const pid = Number(match[1]);
  if (pid === here.ownPid && match[2] === here.host) return false;
  return match[2] !== here.host || here.pidAlive(pid);
}
