import { HeadTailBuffer } from '../../src/tools/exec/output-buffer';

test('keeps everything while it fits', () => {
  const buffer = new HeadTailBuffer(8);
  buffer.push(Buffer.from('hello '));
  buffer.push(Buffer.from('world'));
  expect(buffer.toString()).toBe('hello world');
  expect(buffer.bytes).toBe(11);
});

test('keeps the head and the tail and says how much was omitted', () => {
  const buffer = new HeadTailBuffer(4);
  buffer.push(Buffer.from('0123456789abcdef'));
  expect(buffer.toString()).toBe('0123\n…[8 bytes of output omitted]…\ncdef');
});

test('never decodes half a character at the head or tail edge', () => {
  const buffer = new HeadTailBuffer(5);
  // '€' is three bytes: the head edge falls inside the second one, the tail edge inside the last.
  buffer.push(Buffer.from(`a€€${'x'.repeat(20)}€€`));
  const text = buffer.toString();
  expect(text).not.toContain('\uFFFD');
  expect(text.startsWith('a€')).toBe(true);
  expect(text.endsWith('€')).toBe(true);
});
