import { z } from 'zod';

export const TextContentSchema = z.object({ type: z.literal('text'), text: z.string() });
export type TextContent = z.infer<typeof TextContentSchema>;

/**
 * What a reasoning model thought before answering (`reasoning_content`, `reasoning`, Mistral's
 * `thinking` parts): kept on the assistant message, never part of its answer text. Absent from
 * messages recorded before it existed and from models that do not send it.
 */
export const ThinkingContentSchema = z.object({ type: z.literal('thinking'), thinking: z.string() });
export type ThinkingContent = z.infer<typeof ThinkingContentSchema>;

export const ImageContentSchema = z.object({
  type: z.literal('image'),
  /** base64-encoded image bytes */
  data: z.string(),
  mimeType: z.string(),
});
export type ImageContent = z.infer<typeof ImageContentSchema>;

/** What a tool result may carry: text and images. */
export const ToolResultContentSchema = z.discriminatedUnion('type', [TextContentSchema, ImageContentSchema]);
export type ToolResultContent = z.infer<typeof ToolResultContentSchema>;
