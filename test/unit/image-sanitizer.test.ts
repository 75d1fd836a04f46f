import sharp from 'sharp';
import { MAX_TOOL_RESULT_BYTES } from '../../src/shared/constants';
import type { ImageContent } from '../../src/shared/content';
import {
  DEFAULT_IMAGE_LIMITS,
  ImageRejectedError,
  sanitizeContentImages,
  sanitizeImage,
  sniffImageFormat,
} from '../../src/tools/image-sanitizer';
import { imageResult } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import { toolErrorOf } from './tool-harness';

/** Random pixels: they do not compress, so byte limits really bite. */
async function noisyImage(
  width: number,
  height: number,
  format: 'png' | 'jpeg' | 'webp' | 'tiff',
  channels: 3 | 4 = 3,
): Promise<Buffer> {
  const pixels = Buffer.alloc(width * height * channels);
  let seed = 12345;
  for (let index = 0; index < pixels.length; index++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    pixels[index] = seed >> 16;
  }
  return sharp(pixels, { raw: { width, height, channels } }).toFormat(format).toBuffer();
}

async function solidImage(width: number, height: number, format: 'png' | 'gif' = 'png'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 20, g: 120, b: 200 } } })
    .toFormat(format)
    .toBuffer();
}

const asContent = (bytes: Buffer, mimeType: string): ImageContent => ({
  type: 'image',
  data: bytes.toString('base64'),
  mimeType,
});

async function sizeOf(image: ImageContent) {
  const metadata = await sharp(Buffer.from(image.data, 'base64')).metadata();
  return { width: metadata.width, height: metadata.height, format: metadata.format };
}

test('the default byte limit leaves the base64 image room inside a tool result', () => {
  expect(Math.ceil(DEFAULT_IMAGE_LIMITS.maxBytes / 3) * 4).toBeLessThan(MAX_TOOL_RESULT_BYTES - 4_096);
});

test('an image within the limits passes unchanged', async () => {
  const bytes = await solidImage(64, 32);
  const image = asContent(bytes, 'image/png');
  const sanitized = await sanitizeImage(image);
  expect(sanitized.changed).toBe(false);
  expect(sanitized.image).toEqual(image);
  expect(sanitized).toMatchObject({ width: 64, height: 32, bytes: bytes.length });
});

test('a wrong MIME type is corrected from the bytes', async () => {
  const sanitized = await sanitizeImage(asContent(await solidImage(10, 10), 'image/jpeg'));
  expect(sanitized.image.mimeType).toBe('image/png');
});

test('an image wider than maxWidth is resized, keeping its aspect ratio', async () => {
  const sanitized = await sanitizeImage(asContent(await solidImage(3_000, 1_500), 'image/png'));
  expect(sanitized.changed).toBe(true);
  expect(await sizeOf(sanitized.image)).toMatchObject({ width: 2_000, height: 1_000 });
  expect(sanitized).toMatchObject({ width: 2_000, height: 1_000 });
});

test('an image taller than maxHeight is resized to it', async () => {
  const sanitized = await sanitizeImage(asContent(await solidImage(100, 400), 'image/png'), {
    maxWidth: 1_000,
    maxHeight: 200,
  });
  expect(await sizeOf(sanitized.image)).toMatchObject({ width: 50, height: 200 });
});

test('an image over maxBytes is recompressed and shrunk until it fits', async () => {
  const bytes = await noisyImage(800, 600, 'png');
  const maxBytes = 30_000;
  expect(bytes.length).toBeGreaterThan(maxBytes);
  const sanitized = await sanitizeImage(asContent(bytes, 'image/png'), { maxBytes });
  const encoded = Buffer.from(sanitized.image.data, 'base64');
  expect(encoded.length).toBeLessThanOrEqual(maxBytes);
  expect(sanitized.bytes).toBe(encoded.length);
  const size = await sizeOf(sanitized.image);
  expect(size.width! / size.height!).toBeCloseTo(800 / 600, 1);
  expect(size.width).toBeLessThanOrEqual(800);
  expect(sanitized.image.mimeType).toBe(`image/${size.format}`);
});

test('with the default limits a large noisy photo fits in a tool result', async () => {
  const sanitized = await sanitizeImage(asContent(await noisyImage(2_400, 1_600, 'jpeg'), 'image/jpeg'));
  expect(sanitized.bytes).toBeLessThanOrEqual(DEFAULT_IMAGE_LIMITS.maxBytes);
  expect(sanitized.image.data.length).toBeLessThan(MAX_TOOL_RESULT_BYTES);
  expect(sanitized.image.mimeType).toBe('image/jpeg');
});

test('transparency is kept (as PNG) when that fits', async () => {
  const bytes = await sharp({
    create: { width: 3_000, height: 100, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0.5 } },
  })
    .png()
    .toBuffer();
  const sanitized = await sanitizeImage(asContent(bytes, 'image/png'));
  expect(sanitized.image.mimeType).toBe('image/png');
  const metadata = await sharp(Buffer.from(sanitized.image.data, 'base64')).metadata();
  expect(metadata.hasAlpha).toBe(true);
});

test('formats models do not take are converted (TIFF)', async () => {
  const sanitized = await sanitizeImage(asContent(await noisyImage(40, 30, 'tiff'), 'image/tiff'));
  expect(sanitized.changed).toBe(true);
  expect(['image/png', 'image/jpeg']).toContain(sanitized.image.mimeType);
  expect(await sizeOf(sanitized.image)).toMatchObject({ width: 40, height: 30 });
});

test.each([
  ['text', Buffer.from('hello, not an image')],
  [
    'SVG (it could refer to files)',
    Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><image href="file:///etc/passwd"/></svg>'),
  ],
  ['a truncated PNG', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
  ['nothing', Buffer.alloc(0)],
])('%s is refused', async (_what, bytes) => {
  await expect(sanitizeImage(asContent(bytes, 'image/png'))).rejects.toBeInstanceOf(ImageRejectedError);
});

test('an image with more pixels than can safely be decoded is refused before decoding', async () => {
  // A tiny file that claims 10,000 x 10,000 pixels: a decompression bomb in the making.
  const bytes = await sharp({ create: { width: 10_000, height: 10_000, channels: 3, background: '#000' } })
    .png({ compressionLevel: 9 })
    .toBuffer();
  await expect(sanitizeImage(asContent(bytes, 'image/png'))).rejects.toThrow(/pixel/);
});

test('sniffImageFormat reads magic bytes', async () => {
  expect(sniffImageFormat(await solidImage(2, 2))).toBe('png');
  expect(sniffImageFormat(await solidImage(2, 2, 'gif'))).toBe('gif');
  expect(sniffImageFormat(await noisyImage(2, 2, 'jpeg'))).toBe('jpeg');
  expect(sniffImageFormat(await noisyImage(2, 2, 'webp'))).toBe('webp');
  expect(sniffImageFormat(Buffer.from('<svg/>'))).toBeUndefined();
});

test('sanitizeContentImages replaces unusable images by a note and keeps the rest in order', async () => {
  const good = asContent(await solidImage(8, 8), 'image/png');
  const content = await sanitizeContentImages([
    { type: 'text', text: 'before' },
    asContent(Buffer.from('garbage'), 'image/png'),
    good,
  ]);
  expect(content[0]).toEqual({ type: 'text', text: 'before' });
  expect(content[1]).toMatchObject({
    type: 'text',
    text: expect.stringMatching(/^\[image removed: not a PNG/),
  });
  expect(content[2]).toEqual(good);
});

test('sanitizeContentImages returns text-only content as it is', async () => {
  const content = [{ type: 'text' as const, text: 'only text' }];
  expect(await sanitizeContentImages(content)).toBe(content);
});

describe('imageResult', () => {
  test('text first, then the sanitised image; details describe the image', async () => {
    const result = await imageResult({
      data: await solidImage(2_500, 500),
      mimeType: 'image/png',
      text: 'MEDIA:chart.png',
    });
    expect(result.content[0]).toEqual({ type: 'text', text: 'MEDIA:chart.png' });
    expect(result.content[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(result.details).toMatchObject({ mimeType: 'image/png', width: 2_000, height: 400, resized: true });
  });

  test('takes base64 and its own limits; given details are kept', async () => {
    const result = await imageResult({
      data: (await solidImage(300, 300)).toString('base64'),
      mimeType: 'image/png',
      details: { path: 'a.png' },
      limits: { maxWidth: 100, maxHeight: 100 },
    });
    expect(result.content).toHaveLength(1);
    expect(await sizeOf(result.content[0] as ImageContent)).toMatchObject({ width: 100, height: 100 });
    expect(result.details).toEqual({ path: 'a.png' });
  });

  test('data that is not an image is a ToolError', async () => {
    const error = await toolErrorOf(imageResult({ data: Buffer.from('nope'), mimeType: 'image/png' }));
    expect(error).toBeInstanceOf(ToolError);
    expect(error.kind).toBe('ExecutionFailed');
  });
});
