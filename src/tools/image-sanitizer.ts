import sharp, { type Metadata } from 'sharp';
import type { ImageContent, ToolResultContent } from '../shared/content';
import { MAX_TOOL_RESULT_BYTES } from '../shared/constants';

/** Images are brought within these before they reach the model: larger ones cost tokens or are refused. */
export interface ImageSanitizationLimits {
  /** Pixels. */
  maxWidth: number;
  /** Pixels. */
  maxHeight: number;
  /** Bytes of the encoded image (before base64). */
  maxBytes: number;
}

/**
 * 2,000 pixels a side as in the specs' source; bytes such that the base64 form (4/3 larger) fits in
 * the 64 KB a tool result may hand the model, with room for a line of text beside it.
 */
export const DEFAULT_IMAGE_LIMITS: ImageSanitizationLimits = {
  maxWidth: 2_000,
  maxHeight: 2_000,
  maxBytes: Math.floor(((MAX_TOOL_RESULT_BYTES - 8_192) * 3) / 4),
};

/** Decoding a larger image could take gigabytes of memory: refused before any pixel is decoded. */
const MAX_INPUT_PIXELS = 50_000_000;
const MIN_SIDE = 16;
const SHRINK_STEP = 0.75;
const JPEG_QUALITIES = [80, 60, 40];

/** The formats OpenAI-compatible vision models take; anything else is converted. */
const MODEL_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

export class ImageRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageRejectedError';
  }
}

export interface SanitizedImage {
  image: ImageContent;
  width: number;
  height: number;
  bytes: number;
  /** The image was resized or re-encoded to stay within the limits. */
  changed: boolean;
}

/**
 * Returns the image unchanged when it is a PNG, JPEG, GIF or WebP within the limits; otherwise
 * resizes it (keeping its aspect ratio) and re-encodes it, shrinking further until it fits in
 * `maxBytes`. Throws ImageRejectedError for data that is not an image it can decode (SVG and other
 * formats that can refer to files or run code are refused unread).
 */
export async function sanitizeImage(
  image: ImageContent,
  limits: Partial<ImageSanitizationLimits> = {},
): Promise<SanitizedImage> {
  const { maxWidth, maxHeight, maxBytes } = { ...DEFAULT_IMAGE_LIMITS, ...limits };
  const bytes = Buffer.from(image.data, 'base64');
  const format = sniffImageFormat(bytes);
  if (!format) {
    throw new ImageRejectedError(
      `not a PNG, JPEG, GIF, WebP, TIFF or HEIF/AVIF image (declared ${image.mimeType})`,
    );
  }
  let metadata: Metadata;
  try {
    metadata = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
  } catch (error) {
    throw new ImageRejectedError(`unreadable ${format} image: ${(error as Error).message}`);
  }
  const { width, height } = metadata.autoOrient ?? metadata;
  if (!width || !height) throw new ImageRejectedError(`the ${format} image has no size`);
  if (width * height > MAX_INPUT_PIXELS) {
    throw new ImageRejectedError(`${width}x${height} pixels is more than ${MAX_INPUT_PIXELS} pixels`);
  }
  const upright = !metadata.orientation || metadata.orientation === 1;
  if (
    MODEL_FORMATS.has(format) &&
    upright &&
    width <= maxWidth &&
    height <= maxHeight &&
    bytes.length <= maxBytes
  ) {
    return {
      image: { type: 'image', data: image.data, mimeType: `image/${format}` },
      width,
      height,
      bytes: bytes.length,
      changed: false,
    };
  }

  // A lossless or transparent source (screenshots, diagrams) tries PNG first; photographs go straight to JPEG.
  const triesPng = metadata.hasAlpha === true || format === 'png' || format === 'gif';
  let scale = Math.min(1, maxWidth / width, maxHeight / height);
  for (;;) {
    const targetWidth = Math.max(1, Math.floor(width * scale));
    const targetHeight = Math.max(1, Math.floor(height * scale));
    if (Math.max(targetWidth, targetHeight) < MIN_SIDE) break;
    const resized = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS })
      .rotate()
      .resize(targetWidth, targetHeight, { fit: 'fill' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const raw = () =>
      sharp(resized.data, {
        raw: { width: resized.info.width, height: resized.info.height, channels: resized.info.channels },
      });
    // PNG keeps transparency and sharp edges; JPEG is far smaller for photographs.
    const candidates: Array<() => Promise<[Buffer, string]>> = [
      async () => [await raw().png({ compressionLevel: 9, palette: true }).toBuffer(), 'png'],
      ...JPEG_QUALITIES.map((quality) => async (): Promise<[Buffer, string]> => [
        await raw().flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer(),
        'jpeg',
      ]),
    ];
    let smallest = Infinity;
    for (const encode of triesPng ? candidates : candidates.slice(1)) {
      const [encoded, encodedFormat] = await encode();
      smallest = Math.min(smallest, encoded.length);
      if (encoded.length <= maxBytes) {
        return {
          image: { type: 'image', data: encoded.toString('base64'), mimeType: `image/${encodedFormat}` },
          width: resized.info.width,
          height: resized.info.height,
          bytes: encoded.length,
          changed: true,
        };
      }
    }
    // Encoded size goes roughly with the pixel count: aim just under the limit, at least a step smaller.
    scale *= Math.min(SHRINK_STEP, Math.sqrt(maxBytes / smallest) * 0.95);
  }
  throw new ImageRejectedError(
    `the ${width}x${height} ${format} image cannot be made to fit ${maxBytes} bytes`,
  );
}

/**
 * Every image block brought within the limits; an image that cannot be used becomes a line of text
 * saying why, so the model knows something was there.
 */
export async function sanitizeContentImages(
  content: ToolResultContent[],
  limits: Partial<ImageSanitizationLimits> = {},
): Promise<ToolResultContent[]> {
  if (!content.some((block) => block.type === 'image')) return content;
  return Promise.all(
    content.map(async (block): Promise<ToolResultContent> => {
      if (block.type !== 'image') return block;
      try {
        return (await sanitizeImage(block, limits)).image;
      } catch (error) {
        if (!(error instanceof ImageRejectedError)) throw error;
        return { type: 'text', text: `[image removed: ${error.message}]` };
      }
    }),
  );
}

type SniffedFormat = 'png' | 'jpeg' | 'gif' | 'webp' | 'tiff' | 'heif';

/** The format from the first bytes, whatever the declared MIME type says. */
export function sniffImageFormat(bytes: Buffer): SniffedFormat | undefined {
  const starts = (offset: number, ...values: number[]) =>
    values.every((value, index) => bytes[offset + index] === value);
  const ascii = (offset: number, text: string) =>
    bytes.toString('latin1', offset, offset + text.length) === text;
  if (starts(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'png';
  if (starts(0, 0xff, 0xd8, 0xff)) return 'jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'webp';
  if (starts(0, 0x49, 0x49, 0x2a, 0x00) || starts(0, 0x4d, 0x4d, 0x00, 0x2a)) return 'tiff';
  if (ascii(4, 'ftyp') && /^(heic|heix|hevc|mif1|msf1|avif|avis)$/.test(bytes.toString('latin1', 8, 12)))
    return 'heif';
  return undefined;
}
