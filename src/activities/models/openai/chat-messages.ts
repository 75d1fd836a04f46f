import type OpenAI from 'openai';
import type { ImageContent } from '../../../shared/content';
import {
  type AssistantMessage,
  type Message,
  type ToolCall,
  type ToolResultMessage,
  thinkingOf,
} from '../../../shared/messages';
import type { ModelProvider } from '../../../shared/model-provider';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
/** DeepSeek's own field for a turn's reasoning, beside `content`; not in OpenAI's types. */
type AssistantWithReasoning = OpenAI.Chat.Completions.ChatCompletionAssistantMessageParam & {
  reasoning_content?: string;
};

/**
 * Whether an assistant message's thinking goes back to `provider` in later requests, as
 * `reasoning_content`. Thinking is never sent as answer text, and by default not at all:
 * - openai (and every endpoint not named otherwise): not sent. OpenAI's own API has no such field
 *   and returns none; the old DeepSeek reasoner docs (api-docs.deepseek.com/guides/reasoning_model)
 *   say a `reasoning_content` in the request messages gets a 400, and OpenAI-compatible servers
 *   in general do not promise to accept unknown fields.
 * - gemini, mistral: not sent; neither documents a use for it in the chat-completions messages.
 * - deepseek: sent, but only on assistant messages that called tools. DeepSeek's thinking-mode
 *   docs (api-docs.deepseek.com/guides/thinking_mode) say the reasoning of a turn that called tools
 *   must be passed back in all later requests (a 400 otherwise), and that of a turn without tool
 *   calls is not needed (and ignored). The old deepseek-reasoner could not call tools, so its 400
 *   rule never meets a tool-calling turn.
 */
function sendsReasoningBack(provider: ModelProvider, message: AssistantMessage): boolean {
  switch (provider) {
    case 'deepseek':
      return message.content.some((block) => block.type === 'toolCall');
    case 'openai':
    case 'gemini':
    case 'mistral':
      return false;
  }
}

/**
 * The transcript in the chat-completions wire format. Tool messages there carry text only, so the
 * images of a turn's tool results follow those results as one user message of image parts. An
 * assistant message's thinking is never answer text; whether it goes back is `provider`'s
 * (`sendsReasoningBack`).
 */
export function toOpenAiMessages(
  messages: Message[],
  systemPrompt?: string,
  provider: ModelProvider = 'openai',
): ChatMessage[] {
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
                  ...signatureFor(provider, block),
                },
              ]
            : [],
        );
        const reasoning = sendsReasoningBack(provider, message) ? thinkingOf(message) : '';
        const assistant: AssistantWithReasoning = {
          role: 'assistant',
          // A refused turn says so: the model reads its refusal back as what it answered.
          content: text || message.refusal || null,
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
          ...(reasoning ? { reasoning_content: reasoning } : {}),
        };
        out.push(assistant);
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

/**
 * A tool call's thought signature, back to Gemini only (as it came, in `extra_content`): Gemini 3
 * rejects a function call sent back without its signature (ai.google.dev/gemini-api/docs/thought-signatures).
 */
function signatureFor(provider: ModelProvider, call: ToolCall) {
  return provider === 'gemini' && call.thoughtSignature
    ? { extra_content: { google: { thought_signature: call.thoughtSignature } } }
    : {};
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
