import { z } from 'zod';

/** A piece of text. */
export const TextContentSchema = z.object({
  /** Always `text`. */
  type: z.literal('text'),
  /** The text. */
  text: z.string(),
});
export type TextContent = z.infer<typeof TextContentSchema>;

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
