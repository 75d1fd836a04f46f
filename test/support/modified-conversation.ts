/**
 * Workflow code for the replay test: the conversation with one deliberate change to what it
 * schedules (a timer before anything else), once made bluntly and once behind patched().
 */
import { patched, sleep } from '@temporalio/workflow';
import {
  type ConversationInput,
  conversation as currentConversation,
} from '../../src/workflows/conversation';

/** The change as someone might make it by mistake: histories recorded earlier no longer replay. */
export async function conversation(input: ConversationInput = {}) {
  await sleep(1);
  return currentConversation(input);
}

/** The same change made safely: histories recorded without it replay as before. */
export async function patchedConversation(input: ConversationInput = {}) {
  if (patched('pause-before-start')) await sleep(1);
  return currentConversation(input);
}
