import { createHash } from 'node:crypto';
import type Anthropic from '@anthropic-ai/sdk';
import type { ImageContent } from '../../../shared/content';
import { parsedArguments } from '../../../shared/parsed-arguments';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../../../shared/messages';

type ImageBlockParam = Anthropic.ImageBlockParam;
type TextBlockParam = Anthropic.TextBlockParam;
type ToolResultBlockParam = Anthropic.ToolResultBlockParam;
/** The blocks a transcript becomes. */
type SentBlock =
  | TextBlockParam
  | ImageBlockParam
  | Anthropic.ThinkingBlockParam
  | Anthropic.RedactedThinkingBlockParam
  | Anthropic.ToolUseBlockParam
  | ToolResultBlockParam;
/** A user or assistant turn, as sent. */
export interface AnthropicTurn {
  role: 'user' | 'assistant';
  content: SentBlock[];
}

/** A prompt-cache breakpoint: everything up to and including the block carrying it is cached. */
export const EPHEMERAL: Anthropic.CacheControlEphemeral = { type: 'ephemeral' };

/** The image types the Messages API takes inline. */
const IMAGE_TYPES = new Set<string>(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** What the Messages API accepts as a `tool_use` id. */
const TOOL_USE_ID = /^[a-zA-Z0-9_-]+$/;

/**
 * The transcript as Messages API turns. The API wants user and assistant turns alternating, so a
 * turn's tool results go back as `tool_result` blocks in one user message, joined by the user's
 * message that follows them (and any two turns of the same role are joined likewise). Tool results
 * open their user message: the API wants them before any text there.
 *
 * An assistant turn's thinking goes back only as Anthropic gave it: with its signature (checked by
 * the API in a tool loop), or as `redacted_thinking`. Thinking without either (from another
 * provider, or recorded before signatures were kept) cannot be verified and is left out.
 *
 * The last block of the last turn that can carry one gets a cache breakpoint: the transcript up to
 * there is the stable prefix of the next call.
 */
export function toAnthropicMessages(messages: Message[]): AnthropicTurn[] {
  const turns: AnthropicTurn[] = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content =
      message.role === 'user'
        ? userBlocks(message)
        : message.role === 'assistant'
          ? assistantBlocks(message)
          : [toolResultBlock(message)];
    if (content.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role !== role) turns.push({ role, content });
    else if (message.role === 'toolResult') last.content.splice(toolResultsEnd(last.content), 0, ...content);
    else last.content.push(...content);
  }
  markLastBlock(turns.at(-1)?.content ?? []);
  return turns;
}

function userBlocks(message: UserMessage): SentBlock[] {
  return [
    ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
    ...(message.images ?? []).map(imageBlock),
  ];
}

function assistantBlocks(message: AssistantMessage): SentBlock[] {
  return message.content.flatMap((block): SentBlock[] => {
    switch (block.type) {
      case 'thinking':
        if (block.redacted !== undefined) return [{ type: 'redacted_thinking', data: block.redacted }];
        if (block.signature !== undefined)
          return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
        return [];
      case 'text':
        // The API rejects empty text blocks.
        return block.text ? [{ type: 'text', text: block.text }] : [];
      case 'toolCall':
        return [
          {
            type: 'tool_use',
            id: toolUseId(block.id),
            name: block.name,
            input: parsedArguments(block.arguments),
          },
        ];
    }
  });
}

function toolResultBlock(message: ToolResultMessage): ToolResultBlockParam {
  const content = message.content.flatMap((block): Array<TextBlockParam | ImageBlockParam> => {
    if (block.type === 'image') return [imageBlock(block)];
    return block.text ? [{ type: 'text', text: block.text }] : [];
  });
  return {
    type: 'tool_result',
    tool_use_id: toolUseId(message.toolCallId),
    ...(content.length ? { content } : {}),
    ...(message.isError ? { is_error: true } : {}),
  };
}

/** An image inline as base64; one of a type the API does not take is named in text instead. */
function imageBlock(image: ImageContent): ImageBlockParam | TextBlockParam {
  if (!IMAGE_TYPES.has(image.mimeType)) {
    return { type: 'text', text: `[image: ${image.mimeType}, a type the model cannot read]` };
  }
  return {
    type: 'image',
    source: {
      type: 'base64',
      media_type: image.mimeType as Anthropic.Base64ImageSource['media_type'],
      data: image.data,
    },
  };
}

/**
 * A tool call id the API accepts: Anthropic's own (`toolu_…`) and most others as they are; one with
 * other characters (recorded from another provider) hashed, the same for the call and its result.
 */
function toolUseId(id: string): string {
  return TOOL_USE_ID.test(id) ? id : `toolu_${createHash('sha256').update(id).digest('hex').slice(0, 24)}`;
}

/** Where the tool results of a user turn end: the API wants them before anything else in it. */
function toolResultsEnd(content: SentBlock[]): number {
  const index = content.findIndex((block) => block.type !== 'tool_result');
  return index === -1 ? content.length : index;
}

/** A cache breakpoint on the last block that may carry one (thinking blocks may not). */
function markLastBlock(content: SentBlock[]): void {
  for (let index = content.length - 1; index >= 0; index--) {
    const block = content[index]!;
    if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    content[index] = { ...block, cache_control: EPHEMERAL };
    return;
  }
}
