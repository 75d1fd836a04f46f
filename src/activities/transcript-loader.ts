import { Context } from '@temporalio/activity';
import { type TranscriptPage, transcriptPageQuery } from '../shared/conversation-api';
import type { Message } from '../shared/messages';

/** Fetches messages [0, length) of a conversation when the cache misses (a new or restarted worker). */
export type TranscriptLoader = (
  conversationId: string,
  generation: number,
  length: number,
) => Promise<Message[]>;

/** Reads the transcript from the workflow itself: a query is answered from workflow state and adds nothing to history. */
export const loadTranscriptFromWorkflow: TranscriptLoader = async (conversationId, generation, length) => {
  const handle = Context.current().client.workflow.getHandle(conversationId);
  const messages: Message[] = [];
  let from: number | null = 0;
  while (from !== null && from < length) {
    const page: TranscriptPage = await handle.query(transcriptPageQuery, { generation, from, to: length });
    messages.push(...page.messages);
    from = page.next;
  }
  if (messages.length !== length) {
    throw new Error(`transcript of ${conversationId} has ${messages.length} messages, expected ${length}`);
  }
  return messages;
};
