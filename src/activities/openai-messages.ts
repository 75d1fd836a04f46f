import type OpenAI from 'openai';
import type { ImageContent } from '../shared/content';
import type { Message, ToolResultMessage } from '../shared/messages';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/**
 * The transcript in the chat-completions wire format. Tool messages there carry text only, so the
 * images of a turn's tool results follow those results as one user message of image parts.
 */
export function toOpenAiMessages(messages: Message[], systemPrompt?: string): ChatMessage[] {
  const out: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : [];
  let images: ToolResultMessage[] = [];
  const flushImages = () => {
    if (images.length) out.push(imagesMessage(images));
    images = [];
  };
  for (const message of messages) {
    if (message.role !== 'toolResult') flushImages();
    switch (message.role) {
      case 'user':
        out.push({
          role: 'user',
          content: message.images?.length
            ? [{ type: 'text', text: message.content }, ...message.images.map(imagePart)]
            : message.content,
        });
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
        if (message.content.some((block) => block.type === 'image')) images.push(message);
        break;
    }
  }
  flushImages();
  return out;
}

/** Text only: each image is named where it was, and said to follow. */
function toolResultText(message: ToolResultMessage): string {
  return message.content
    .map((block) => (block.type === 'text' ? block.text : `[image: ${block.mimeType}, attached below]`))
    .join('\n');
}

/** The images of tool results as image parts, each introduced by the tool call it came from. */
function imagesMessage(results: ToolResultMessage[]): ChatMessage {
  return {
    role: 'user',
    content: results.flatMap((result) => [
      { type: 'text' as const, text: `Image(s) returned by ${result.toolName} (${result.toolCallId}):` },
      ...result.content.flatMap((block) => (block.type === 'image' ? [imagePart(block)] : [])),
    ]),
  };
}

function imagePart(image: ImageContent) {
  return { type: 'image_url' as const, image_url: { url: `data:${image.mimeType};base64,${image.data}` } };
}
