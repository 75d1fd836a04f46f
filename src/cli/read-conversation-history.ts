import type { Client } from '@temporalio/client';
import type { ExecutionHistory } from '../history/build-timeline';
import { readDecodedHistory } from '../history/decoded-conversation-history';
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
  const { executions, undecoded, firstError } = await readDecodedHistory(client, conversationId, latest);
  if (undecoded) log(`${undecoded} payloads could not be decoded and are shown as stored: ${firstError}`);
  return executions;
}
