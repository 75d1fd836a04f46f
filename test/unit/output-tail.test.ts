import { randomBytes } from 'node:crypto';
import { HeadTailBuffer } from '../../src/tools/exec/output-buffer';
import { PollableOutput } from '../../src/tools/exec/process-output';

/** Output that is not UTF-8: every byte a lone continuation byte, decoded as U+FFFD (3 bytes). */
const notUtf8 = (bytes: number) => Buffer.alloc(bytes, 0x80);

test('cut to a budget, the end is kept whole and the beginning gives way', () => {
  const buffer = new HeadTailBuffer(32 * 1024);
  buffer.push(Buffer.from(`${'a'.repeat(200_000)}THE-END`));
  const text = buffer.toString(40_000);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(40_000);
  expect(text.endsWith('aTHE-END')).toBe(true);
  const [head, omitted, tail] = /^(a+)\n…\[(\d+) bytes of output omitted\]…\n(a+THE-END)$/
    .exec(text)!
    .slice(1);
  expect(head!.length + Number(omitted) + tail!.length).toBe(200_007);
  expect(tail!.length).toBeGreaterThanOrEqual(head!.length);
});

test('output that decodes larger than its bytes still fits, end first', () => {
  const buffer = new HeadTailBuffer(32 * 1024);
  buffer.push(notUtf8(100_000));
  buffer.push(Buffer.from('\nTHE-END\n'));
  const text = buffer.toString(60_000);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(60_000);
  expect(text.endsWith('\nTHE-END\n')).toBe(true);
});

test('short output that is all in the head keeps its end when it must be cut', () => {
  const buffer = new HeadTailBuffer(32 * 1024);
  buffer.push(notUtf8(30_000));
  buffer.push(Buffer.from('THE-END'));
  const text = buffer.toString(20_000);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(20_000);
  expect(text.endsWith('THE-END')).toBe(true);
  expect(text).toMatch(/bytes of output omitted/);
});

test('output that fits is returned whole, without a marker', () => {
  const buffer = new HeadTailBuffer(32 * 1024);
  buffer.push(Buffer.from('b'.repeat(60_000)));
  expect(buffer.toString(61_000)).toBe('b'.repeat(60_000));
});

test('a poll of output that is not UTF-8 stays within its budget; what is left comes next', () => {
  const output = new PollableOutput(1024 * 1024);
  const random = randomBytes(200_000);
  output.push(random);
  let read = 0;
  for (let polls = 0; polls < 100 && read < random.length; polls++) {
    const { text, pending } = output.read(48 * 1024);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(48 * 1024);
    read = random.length - pending;
  }
  expect(read).toBe(random.length);
});
