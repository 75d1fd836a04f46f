import type { Client } from '@temporalio/client';
import { livePollersOf } from '../worker/other-workers';

/**
 * Why no worker will answer a query on `taskQueue`, when the server lists no live poller there: a
 * query none takes would wait for the server's timeout. Undefined when one polls, or when the
 * server cannot say.
 */
export async function noWorkerFor(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<string | undefined> {
  const polled = await livePollersOf(client.workflowService, namespace, taskQueue).catch(() => true);
  return polled ? undefined : 'no worker polls it';
}
