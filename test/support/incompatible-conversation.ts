/**
 * Build B of the deploy test: the conversation with a change histories of the current build do not
 * replay on, a timer started beside its first activity. Its handlers are registered before the
 * timer, as a real change would keep them, so clients reach it as they reach the current build.
 */
import { sleep } from '@temporalio/workflow';
import {
  type ConversationInput,
  conversation as currentConversation,
} from '../../src/workflows/conversation';

export async function conversation(input: ConversationInput = {}) {
  const [result] = await Promise.all([currentConversation(input), sleep(1)]);
  return result;
}
