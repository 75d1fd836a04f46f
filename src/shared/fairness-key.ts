import { rootConversationOf } from './sub-agents';

/** Temporal limits a fairness key to 64 bytes. */
const LONGEST_FAIRNESS_KEY_BYTES = 64;

/**
 * The Temporal fairness key a conversation starts with, which its sub-agents and activities inherit:
 * its agent id, or its tree's top conversation when it names none. Task queues then dispatch the
 * backlogged tasks of each key in turn (where the server has `matching.enableFairness`), and the
 * model limiter serves each key in turn, so one agent or one tree of 500 sub-agents cannot starve
 * the others. Cut to 64 bytes: two keys that share them only share their turn.
 */
export function conversationFairnessKey(conversationId: string, agentId: string | undefined): string {
  let key = agentId ?? rootConversationOf(conversationId);
  const encoder = new TextEncoder();
  while (encoder.encode(key).length > LONGEST_FAIRNESS_KEY_BYTES) key = key.slice(0, -1);
  return key;
}
