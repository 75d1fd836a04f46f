import { z } from 'zod';
import {
  ImageContentSchema,
  TextContentSchema,
  ThinkingContentSchema,
  ToolResultContentSchema,
} from './content';
import { ToolOutcomeFieldsSchema } from './tool-outcome';

/** A tool call as the model asked for it. `arguments` is the raw JSON text the model produced. */
export const ToolCallSchema = z.object({
  type: z.literal('toolCall'),
  id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
  /**
   * Gemini's thought signature for the call (`extra_content.google.thought_signature`), which
   * Gemini 3 wants back with the call in later requests; absent from other providers and from
   * calls recorded before it was kept.
   */
  thoughtSignature: z.string().optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const UsageSchema = z.object({ inputTokens: z.number(), outputTokens: z.number() });
export type Usage = z.infer<typeof UsageSchema>;

export const UserMessageSchema = z.object({
  role: z.literal('user'),
  content: z.string(),
  /** Client-chosen id, so a sender can find the run that answered it. */
  messageId: z.string(),
  /** Who sent it, as the caller vouched; absent when the caller named nobody. */
  sender: z.string().optional(),
  /** Images sent with the text; absent when there were none. */
  images: z.array(ImageContentSchema).optional(),
  timestamp: z.number(),
});
export type UserMessage = z.infer<typeof UserMessageSchema>;

export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  /** Text, tool calls, and (from reasoning models) thinking, which is never part of the answer. */
  content: z.array(z.discriminatedUnion('type', [TextContentSchema, ToolCallSchema, ThinkingContentSchema])),
  stopReason: z.enum(['stop', 'toolUse', 'length', 'contentFilter']),
  model: z.string(),
  usage: UsageSchema.optional(),
  timestamp: z.number(),
});
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

export const ToolResultMessageSchema = z.object({
  role: z.literal('toolResult'),
  toolCallId: z.string(),
  toolName: z.string(),
  content: z.array(ToolResultContentSchema).min(1),
  details: z.unknown().optional(),
  isError: z.boolean(),
  /** The call was interrupted by steer or abort; `content` holds what it returned before stopping, if anything. */
  aborted: z.boolean().optional(),
  /** The outcome's fields (see tool-outcome.ts); absent in transcripts recorded before they existed: read them with `outcomeFieldsOf`. */
  ...ToolOutcomeFieldsSchema.partial().shape,
  timestamp: z.number(),
});
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

export const MessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
]);
export type Message = z.infer<typeof MessageSchema>;

export function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.filter((block): block is ToolCall => block.type === 'toolCall');
}

export function textOf(message: AssistantMessage): string {
  return message.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

/** What the model thought before answering, when it said (reasoning models); '' otherwise. */
export function thinkingOf(message: AssistantMessage): string {
  return message.content.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : [])).join('');
}
