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

/** The largest payload (as stored, after the codec) in each event of a history: what Temporal's limits apply to. */
export function largestPayloadBytes(history: temporal.api.history.v1.IHistory): number {
  let largest = 0;
  const visit = (value: unknown): void => {
    if (value === null || typeof value !== 'object') return;
    if (value instanceof Uint8Array) return;
    const record = value as Record<string, unknown>;
    if (record.data instanceof Uint8Array && 'metadata' in record) {
      largest = Math.max(largest, record.data.length);
      return;
    }
    for (const child of Object.values(record)) visit(child);
  };
  visit(history.events);
  return largest;
}
