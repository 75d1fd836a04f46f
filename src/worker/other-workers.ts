import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

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
    const { pollers } = await connection.workflowService.describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    const ownPrefix = `${process.pid}@`;
    const since = Date.now() - ALIVE_WITHIN_MS;
    return (pollers ?? []).some((poller) => {
      const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
      return !poller.identity?.startsWith(ownPrefix) && seconds * 1_000 >= since;
    });
  } finally {
    await connection.close();
  }
}
