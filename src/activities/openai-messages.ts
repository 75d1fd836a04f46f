import type OpenAI from 'openai';
import type { Message, ToolResultMessage } from '../shared/messages';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The transcript in the chat-completions wire format. */
export function toOpenAiMessages(messages: Message[], systemPrompt?: string): ChatMessage[] {
  const out: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        out.push({ role: 'user', content: message.content });
        break;
      case 'assistant': {
        const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
        const toolCalls = message.content.flatMap((block) =>
          block.type === 'toolCall'
            ? [
                {
                  id: block.id,
                  type: 'function' as const,
                  function: { name: block.name, arguments: block.arguments },
                },
              ]
            : [],
        );
        out.push({
          role: 'assistant',
          content: text || null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        });
        break;
      }
      case 'toolResult':
        out.push({ role: 'tool', tool_call_id: message.toolCallId, content: toolResultText(message) });
        break;
    }
  }
  return out;
}

/** Tool messages carry text only in this wire format; images are named so the model knows they existed. */
function toolResultText(message: ToolResultMessage): string {
  return message.content
    .map((block) => (block.type === 'text' ? block.text : `[image: ${block.mimeType}]`))
    .join('\n');
}
