import { z } from 'zod';
import { ClientToolsSchema } from './client-tools';
import {
  ImageContentSchema,
  TextContentSchema,
  ThinkingContentSchema,
  ToolResultContentSchema,
} from './content';
import { ToolOutcomeFieldsSchema } from './tool-outcome';

/** A tool call as the model asked for it. `arguments` is the raw JSON text the model produced. */
export const ToolCallSchema = z.object({
  /** Always `toolCall`. */
  type: z.literal('toolCall'),
  /** The call's id, as the model gave it. */
  id: z.string().min(1),
  /** The tool's name. */
  name: z.string(),
  /** The arguments, as the JSON text the model produced. */
  arguments: z.string(),
  /**
   * Gemini's thought signature for the call (`extra_content.google.thought_signature`), which
   * Gemini 3 wants back with the call in later requests; absent from other providers and from
   * calls recorded before it was kept.
   */
  thoughtSignature: z.string().optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** The tokens of one model call, as the endpoint reported them. */
export const UsageSchema = z.object({
  /** Tokens the model read. */
  inputTokens: z.number(),
  /** Tokens the model wrote. */
  outputTokens: z.number(),
  /**
   * Of `inputTokens`, those the provider read from its prompt cache (billed at a fraction of the
   * input price); absent when the provider did not say.
   */
  cachedInputTokens: z.number().optional(),
  /** Of `inputTokens`, those written to the provider's prompt cache (Anthropic bills them above the input price). */
  cacheWriteTokens: z.number().optional(),
  /** Of `outputTokens`, those the model spent reasoning; absent when the provider did not say. */
  reasoningTokens: z.number().optional(),
  /** What the call cost in US dollars by the worker's price table (AGENT_MODEL_PRICES); absent without a price for the model. */
  costUsd: z.number().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

/** A message from a person (or a client on their behalf). */
export const UserMessageSchema = z.object({
  /** Always `user`. */
  role: z.literal('user'),
  /** The message's text. */
  content: z.string(),
  /** Client-chosen id, so a sender can find the run that answered it. */
  messageId: z.string(),
  /** Who sent it, as the caller vouched; absent when the caller named nobody. */
  sender: z.string().optional(),
  /** Images sent with the text; absent when there were none. */
  images: z.array(ImageContentSchema).optional(),
  /**
   * While the message waits for its run: the tools its sender offers for that run (client-tools.ts).
   * Never in the transcript: the run takes them and appends the message without them.
   */
  clientTools: ClientToolsSchema.optional(),
  /** When it joined the transcript: workflow time, in ms since the epoch. */
  timestamp: z.number(),
});
export type UserMessage = z.infer<typeof UserMessageSchema>;

/** The model's answer to one call: text and tool calls. */
export const AssistantMessageSchema = z.object({
  /** Always `assistant`. */
  role: z.literal('assistant'),
  /** Text, tool calls, and (from reasoning models) thinking, which is never part of the answer. */
  content: z.array(z.discriminatedUnion('type', [TextContentSchema, ToolCallSchema, ThinkingContentSchema])),
  /**
   * Why the model stopped: done, to call tools, at its output limit, filtered, or because its
   * provider refused to answer (`refusal`).
   */
  stopReason: z.enum(['stop', 'toolUse', 'length', 'contentFilter', 'refusal']),
  /**
   * Why the provider refused, in its own words (Anthropic's `stop_details`, the Responses API's and
   * Chat Completions' refusal text), bounded and stripped of what a terminal would act on; absent
   * when it gave none, and on an answer it did not refuse.
   */
  refusal: z.string().optional(),
  /** The model that answered. */
  model: z.string(),
  /** The call's tokens, when the endpoint reported them. */
  usage: UsageSchema.optional(),
  /** When it joined the transcript: workflow time, in ms since the epoch. */
  timestamp: z.number(),
});
/**
 * The model's answer to one call: text, thinking and tool calls, why it stopped, and its usage.
 *
 * @useDeclaredType
 */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;

/** What a tool call came to, as the model reads it. */
export const ToolResultMessageSchema = z.object({
  /** Always `toolResult`. */
  role: z.literal('toolResult'),
  /** The call it answers. */
  toolCallId: z.string(),
  /** The tool's name. */
  toolName: z.string(),
  /** What the model reads: text and images. */
  content: z.array(ToolResultContentSchema).min(1),
  /** The tool's details, for user interfaces; the model never sees them. */
  details: z.unknown().optional(),
  /** True when the model reads it as an error: a failure, a block, or an interruption with nothing kept. */
  isError: z.boolean(),
  /** The call was interrupted by steer or abort; `content` holds what it returned before stopping, if anything. */
  aborted: z.boolean().optional(),
  /** The outcome's fields (see tool-outcome.ts); absent in transcripts recorded before they existed: read them with `outcomeFieldsOf`. */
  ...ToolOutcomeFieldsSchema.partial().shape,
  /** When it joined the transcript: workflow time, in ms since the epoch. */
  timestamp: z.number(),
});
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

export const MessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
]);
/**
 * One message of a transcript: a user's, the assistant's (text, thinking and tool calls) or a tool
 * result, told apart by `role`.
 *
 * @useDeclaredType
 */
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
