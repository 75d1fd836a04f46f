import type OpenAI from 'openai';
import type { ImageContent, TextContent } from '../../../shared/content';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../../../shared/messages';

type InputItem = OpenAI.Responses.ResponseInputItem;

/**
 * The transcript as Responses API input items: user messages with their images, each assistant
 * turn's reasoning items (sent back so the model goes on from its own reasoning in a tool loop;
 * encrypted, since nothing is stored), text and function calls in order, and each tool result as
 * its call's output, images included.
 */
export function toResponsesInput(messages: Message[]): InputItem[] {
  return messages.flatMap((message): InputItem[] => {
    switch (message.role) {
      case 'user':
        return [userItem(message)];
      case 'assistant':
        return assistantItems(message);
      case 'toolResult':
        return [toolOutputItem(message)];
    }
  });
}

function imagePart(image: ImageContent): OpenAI.Responses.ResponseInputImage {
  return { type: 'input_image', image_url: `data:${image.mimeType};base64,${image.data}`, detail: 'auto' };
}

function userItem(message: UserMessage): InputItem {
  if (!message.images?.length) return { role: 'user', content: message.content };
  return {
    role: 'user',
    content: [{ type: 'input_text', text: message.content }, ...message.images.map(imagePart)],
  };
}

/**
 * An assistant turn's items. A refused turn goes back without its reasoning (whose following
 * refusal item is not kept, and a reasoning item is refused without it), its refusal as the
 * assistant's words.
 */
function assistantItems(message: AssistantMessage): InputItem[] {
  const items: InputItem[] = [];
  const refused = message.stopReason === 'refusal';
  for (const part of message.content) {
    if (part.type === 'thinking') {
      // Only reasoning the Responses API itself produced goes back; other providers' thinking cannot.
      if (!part.reasoningItem || refused) continue;
      items.push({
        type: 'reasoning',
        id: part.reasoningItem.id,
        summary: part.thinking ? [{ type: 'summary_text', text: part.thinking }] : [],
        ...(part.reasoningItem.encryptedContent !== undefined
          ? { encrypted_content: part.reasoningItem.encryptedContent }
          : {}),
      });
    } else if (part.type === 'text') {
      if (part.text) items.push(assistantTextItem(part));
    } else {
      items.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments });
    }
  }
  if (refused && message.refusal) items.push({ role: 'assistant', content: message.refusal });
  return items;
}

/**
 * Text the Responses API wrote goes back as the output message it was, id and all: a reasoning
 * item before it is refused unless its own following item comes with it. Other text goes as a
 * plain assistant message.
 */
function assistantTextItem(part: TextContent): InputItem {
  if (!part.responseItem) return { role: 'assistant', content: part.text };
  const { id, phase, incomplete } = part.responseItem;
  return {
    type: 'message',
    id,
    role: 'assistant',
    status: incomplete ? 'incomplete' : 'completed',
    content: [{ type: 'output_text', text: part.text, annotations: [] }],
    ...(phase === 'commentary' || phase === 'final_answer' ? { phase } : {}),
  };
}

function toolOutputItem(message: ToolResultMessage): InputItem {
  const images = message.content.filter((part): part is ImageContent => part.type === 'image');
  const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
  if (images.length === 0) return { type: 'function_call_output', call_id: message.toolCallId, output: text };
  return {
    type: 'function_call_output',
    call_id: message.toolCallId,
    output: [...(text ? [{ type: 'input_text' as const, text }] : []), ...images.map(imagePart)],
  };
}
