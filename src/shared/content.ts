import { z } from 'zod';

export const TextContentSchema = z.object({ type: z.literal('text'), text: z.string() });
export type TextContent = z.infer<typeof TextContentSchema>;

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
