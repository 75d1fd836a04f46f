import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { z } from 'zod';
import { DEFAULT_IMAGE_LIMITS } from '../../src/tools/image-sanitizer';
import { defineTool } from '../../src/tools/tool';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';

/** Returns an image far over the limits, as a careless tool might: raw, not through imageResult. */
const screenshotTool = defineTool({
  name: 'screenshot',
  label: 'Screenshot',
  description: 'Returns a large image',
  parameters: z.object({}),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute() {
    const width = 3_000;
    const height = 1_500;
    const pixels = Buffer.alloc(width * height * 3);
    for (let index = 0; index < pixels.length; index++) pixels[index] = (index * 7919) % 251;
    const png = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer();
    return {
      content: [
        { type: 'text', text: 'the screen:' },
        { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
      ],
    };
  },
});

const harness = useNockedHarness([screenshotTool]);

test('an oversized tool image is brought within the limits before history, and reaches the model as an image part', async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_shot', name: 'screenshot', arguments: {} }] },
    { text: 'I see stripes.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const asked = await ask(harness().agent, id, 'Look at the screen.');
  expect(asked.finished).toMatchObject({ outcome: 'answered', answer: 'I see stripes.' });

  // After the default system prompt: the conversation as the model reads it.
  const messages = script.requests[1]!.messages.slice(1) as Array<{
    role: string;
    content?: unknown;
    tool_call_id?: string;
  }>;
  expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user']);
  const toolMessage = messages[2]!;
  expect(toolMessage.content).toMatch(/^the screen:\n\[image: image\/(png|jpeg), attached below\]$/);
  const parts = messages[3]!.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
  expect(parts[0]).toEqual({ type: 'text', text: 'Image(s) returned by screenshot (call_shot):' });
  const url = parts[1]!.image_url!.url;
  const [, mimeType, data] = /^data:(image\/[a-z]+);base64,(.+)$/.exec(url)!;
  const bytes = Buffer.from(data!, 'base64');
  expect(bytes.length).toBeLessThanOrEqual(DEFAULT_IMAGE_LIMITS.maxBytes);
  const metadata = await sharp(bytes).metadata();
  expect(`image/${metadata.format}`).toBe(mimeType);
  expect(metadata.width).toBeLessThanOrEqual(2_000);
  expect(metadata.width! / metadata.height!).toBeCloseTo(2, 1);

  // What entered the transcript (and so history) is the sanitised image, not the original.
  const state = await harness().agent.state(id);
  const result = state.transcript.find((message) => message.role === 'toolResult');
  expect(result?.role === 'toolResult' && result.content[1]).toMatchObject({ type: 'image', mimeType, data });
});
