import type { Client } from '@temporalio/client';
import type { ExecutionHistory } from '../history/build-timeline';
import { fetchConversationHistories } from '../history/conversation-history';
import { decodeHistoryPayloads } from '../history/decode-history-payloads';
import { log } from './cleanups';

/**
 * A conversation's executions (the newest `latest` of them), oldest first, their payloads decoded
 * with the client's codecs; says on stderr when some could not be (they stay as stored).
 */
export async function readConversationHistory(
  client: Client,
  conversationId: string,
  latest?: number,
): Promise<ExecutionHistory[]> {
  const executions = await fetchConversationHistories(client, conversationId, latest ? { latest } : {});
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  let undecoded = 0;
  let firstError: string | undefined;
  for (const execution of executions) {
    const decoded = await decodeHistoryPayloads(execution.history, codecs);
    undecoded += decoded.undecoded;
    firstError ??= decoded.firstError;
  }
  if (undecoded) log(`${undecoded} payloads could not be decoded and are shown as stored: ${firstError}`);
  return executions;
}
