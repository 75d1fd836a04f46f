import type { Client } from '@temporalio/client';
import type { ExecutionHistory } from './build-timeline';
import { fetchConversationHistories } from './conversation-history';
import { decodeHistoryPayloads } from './decode-history-payloads';

/** A conversation's executions with their payloads decoded, and what could not be. */
export interface DecodedConversationHistory {
  /** Oldest first. */
  executions: ExecutionHistory[];
  /** Payloads no codec of the client could decode: they stay as stored. */
  undecoded: number;
  /** Why the first of those could not be decoded. */
  firstError?: string;
}

/** The conversation's executions (the newest `latest` of them), oldest first, decoded with the client's codecs. */
export async function readDecodedHistory(
  client: Client,
  conversationId: string,
  latest?: number,
): Promise<DecodedConversationHistory> {
  const executions = await fetchConversationHistories(client, conversationId, latest ? { latest } : {});
  const codecs = client.options.loadedDataConverter.payloadCodecs;
  let undecoded = 0;
  let firstError: string | undefined;
  for (const execution of executions) {
    const decoded = await decodeHistoryPayloads(execution.history, codecs);
    undecoded += decoded.undecoded;
    firstError ??= decoded.firstError;
  }
  return { executions, undecoded, ...(firstError !== undefined ? { firstError } : {}) };
}
