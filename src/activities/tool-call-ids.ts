import { randomUUID } from 'node:crypto';
import type { AssistantMessage, Message } from '../shared/messages';

/**
 * Tool call ids key results, events and idempotency, so they must be unique in the conversation.
 * Some OpenAI-compatible servers omit them or reuse "call_0" every turn; those get fresh ids.
 */
export function withUniqueToolCallIds(reply: AssistantMessage, earlier: Message[]): AssistantMessage {
  const seen = new Set<string>();
  for (const message of earlier) {
    if (message.role === 'toolResult') seen.add(message.toolCallId);
  }
  const content = reply.content.map((block) => {
    if (block.type !== 'toolCall') return block;
    const id =
      block.id && !seen.has(block.id) ? block.id : `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    seen.add(id);
    return id === block.id ? block : { ...block, id };
  });
  return { ...reply, content };
}
