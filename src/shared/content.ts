import { z } from 'zod';

/** A piece of text. */
export const TextContentSchema = z.object({
  /** Always `text`. */
  type: z.literal('text'),
  /** The text. */
  text: z.string(),
  /**
   * The Responses API's output message this text came from: its id, and its phase where the model
   * said whether it was commentary or the final answer. Sent back with the text, since a reasoning
   * item before it must be followed by that same item.
   */
  responseItem: z
    .object({
      /** The message item's id (`msg_…`). */
      id: z.string(),
      /** `commentary` or `final_answer`, as the model marked the message. */
      phase: z.string().optional(),
      /** The message was cut off (at the output token limit): it goes back as `incomplete`, not `completed`. */
      incomplete: z.literal(true).optional(),
    })
    .optional(),
});
export type TextContent = z.infer<typeof TextContentSchema>;

/**
 * What a reasoning model thought before answering (`reasoning_content`, `reasoning`, Mistral's
 * `thinking` parts): kept on the assistant message, never part of its answer text. Absent from
 * messages recorded before it existed and from models that do not send it.
 */
export const ThinkingContentSchema = z.object({
  /** Always `thinking`. */
  type: z.literal('thinking'),
  /** The model's thinking, as it sent it ('' where the provider sent it only encrypted). */
  thinking: z.string(),
  /** Anthropic's signature over the block, which Anthropic checks when the block comes back in a tool loop. */
  signature: z.string().optional(),
  /** Anthropic's `redacted_thinking` data: thinking encrypted by the provider, sent back as it came. */
  redacted: z.string().optional(),
  /**
   * The Responses API's reasoning item this thinking came from: its id, and its encrypted content
   * (asked for when responses are not stored), both sent back on the next call of a tool loop.
   */
  reasoningItem: z
    .object({
      /** The reasoning item's id. */
      id: z.string(),
      /** Its encrypted content (`include: ['reasoning.encrypted_content']`), absent when the response was stored. */
      encryptedContent: z.string().optional(),
    })
    .optional(),
});
export type ThinkingContent = z.infer<typeof ThinkingContentSchema>;

/** An image, inline. */
export const ImageContentSchema = z.object({
  /** Always `image`. */
  type: z.literal('image'),
  /** base64-encoded image bytes */
  data: z.string(),
  /** The image's type, e.g. `image/png`. */
  mimeType: z.string(),
});
export type ImageContent = z.infer<typeof ImageContentSchema>;

/** What a tool result may carry: text and images. */
export const ToolResultContentSchema = z.discriminatedUnion('type', [TextContentSchema, ImageContentSchema]);
export type ToolResultContent = z.infer<typeof ToolResultContentSchema>;
