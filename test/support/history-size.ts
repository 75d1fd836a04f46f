import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** Size of a workflow's history as the server stores it: the encoded protobuf. */
export async function historyBytes(
  client: Client,
  workflowId: string,
): Promise<{ bytes: number; events: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return {
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    events: history.events?.length ?? 0,
  };
}
