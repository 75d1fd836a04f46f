import { createHash } from 'node:crypto';
import type OpenAI from 'openai';
import type { ModelProvider } from '../../../shared/model-provider';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/**
 * Tool call ids as `provider` accepts them: Mistral takes only nine
 * letters and digits. The transcript keeps its own ids (they key results, events and idempotency);
 * only what is sent is rewritten, the same way for a call and its result, and the same way in every
 * request, so the model sees one consistent conversation.
 */
export function withProviderToolCallIds(messages: ChatMessage[], provider: ModelProvider): ChatMessage[] {
  if (provider !== 'mistral') return messages;
  const sent = new Map<string, string>();
  const used = new Set<string>();
  const idFor = (id: string) => {
    let out = sent.get(id);
    if (out === undefined) {
      out = MISTRAL_ID.test(id) && !used.has(id) ? id : hashedId(id, used);
      sent.set(id, out);
      used.add(out);
    }
    return out;
  };
  return messages.map((message) => {
    if (message.role === 'assistant' && message.tool_calls) {
      return { ...message, tool_calls: message.tool_calls.map((call) => ({ ...call, id: idFor(call.id) })) };
    }
    if (message.role === 'tool') return { ...message, tool_call_id: idFor(message.tool_call_id) };
    return message;
  });
}

function hashedId(id: string, used: ReadonlySet<string>): string {
  for (let attempt = 0; ; attempt++) {
    const candidate = createHash('sha256').update(`${id}:${attempt}`).digest('hex').slice(0, 9);
    if (!used.has(candidate)) return candidate;
  }
}
