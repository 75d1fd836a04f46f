import { truncateJson, truncateText, truncateToolResult } from '../../src/tools/truncate';
import type { ToolResult } from '../../src/tools/tool';

const bytes = (text: string) => Buffer.byteLength(text);
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
const SUFFIX = /\n…\[truncated: (\d+) of (\d+) bytes omitted\]$/;

/** Splits a truncated text into what was kept and the numbers of its suffix. */
function parseTruncated(text: string): { kept: string; omitted: number; total: number } {
  const match = SUFFIX.exec(text);
  if (!match) throw new Error(`no truncation suffix in ${JSON.stringify(text.slice(-80))}`);
  return { kept: text.slice(0, match.index), omitted: Number(match[1]), total: Number(match[2]) };
}

const textBlocks = (result: ToolResult) =>
  result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));

describe('truncateText', () => {
  test('short text is returned unchanged', () => {
    expect(truncateText('hello', 100)).toBe('hello');
    expect(truncateText('', 0)).toBe('');
  });

  test('text of exactly maxBytes is unchanged; one byte more is cut', () => {
    const exact = 'x'.repeat(200);
    expect(truncateText(exact, 200)).toBe(exact);
    const over = truncateText(`${exact}y`, 200);
    expect(over).not.toBe(`${exact}y`);
    expect(bytes(over)).toBeLessThanOrEqual(200);
  });

  test('long text is cut to at most maxBytes with a correct suffix', () => {
    const original = 'abcdefghij'.repeat(100);
    const cut = truncateText(original, 100);
    expect(bytes(cut)).toBeLessThanOrEqual(100);
    // Uses the budget rather than throwing most of it away.
    expect(bytes(cut)).toBeGreaterThanOrEqual(96);
    const { kept, omitted, total } = parseTruncated(cut);
    expect(original.startsWith(kept)).toBe(true);
    expect(kept.length).toBeGreaterThan(0);
    expect(total).toBe(1_000);
    expect(omitted).toBe(1_000 - bytes(kept));
  });

  test.each(Array.from({ length: 8 }, (_, index) => 100 + index))(
    'never splits a 3-byte character (maxBytes %i)',
    (maxBytes) => {
      const original = '€'.repeat(500);
      const cut = truncateText(original, maxBytes);
      expect(bytes(cut)).toBeLessThanOrEqual(maxBytes);
      expect(cut).not.toContain('\uFFFD');
      const { kept, omitted, total } = parseTruncated(cut);
      expect(kept).toBe('€'.repeat(kept.length));
      expect(kept.length).toBeGreaterThan(0);
      expect(total).toBe(1_500);
      expect(omitted).toBe(1_500 - bytes(kept));
    },
  );

  test.each([97, 98, 99, 100])('never splits a 4-byte emoji (maxBytes %i)', (maxBytes) => {
    const original = '😀'.repeat(300);
    const cut = truncateText(original, maxBytes);
    expect(bytes(cut)).toBeLessThanOrEqual(maxBytes);
    const { kept, omitted, total } = parseTruncated(cut);
    expect(kept).toBe('😀'.repeat(kept.length / 2));
    expect(kept).not.toContain('\uFFFD');
    expect(total).toBe(1_200);
    expect(omitted).toBe(1_200 - bytes(kept));
  });

  test('mixed-width text is cut on a character boundary', () => {
    const original = 'a€😀é'.repeat(200);
    for (let maxBytes = 80; maxBytes < 100; maxBytes++) {
      const cut = truncateText(original, maxBytes);
      const { kept } = parseTruncated(cut);
      expect(original.startsWith(kept)).toBe(true);
      expect(Buffer.from(kept).toString('utf8')).toBe(kept);
      expect(bytes(cut)).toBeLessThanOrEqual(maxBytes);
    }
  });

  test('a budget smaller than the suffix still stays within maxBytes', () => {
    // truncateToolResult hands later blocks whatever budget is left, which can be tiny.
    expect(bytes(truncateText('x'.repeat(1_000), 10))).toBeLessThanOrEqual(10);
  });
});

describe('truncateJson', () => {
  test('values within the budget are returned as they are', () => {
    const value = { a: 1, b: ['x', 'y'] };
    expect(truncateJson(value, 1_000)).toBe(value);
    expect(truncateJson('short', 100)).toBe('short');
    expect(truncateJson(42, 10)).toBe(42);
    expect(truncateJson(null, 10)).toBeNull();
  });

  test('undefined stays undefined', () => {
    expect(truncateJson(undefined, 0)).toBeUndefined();
  });

  test('a long string is truncated like text', () => {
    const value = 'q'.repeat(5_000);
    const result = truncateJson(value, 300);
    expect(result).toBe(truncateText(value, 300));
    expect(typeof result).toBe('string');
    expect(bytes(result as string)).toBeLessThanOrEqual(300);
  });

  test('a long array keeps its leading elements plus a sentinel, within budget', () => {
    const value = Array.from({ length: 100 }, (_, index) => ({ index, pad: 'p'.repeat(20) }));
    const result = truncateJson(value, 500) as unknown[];
    expect(Array.isArray(result)).toBe(true);
    const sentinel = result[result.length - 1];
    const kept = result.slice(0, -1);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(value.slice(0, kept.length));
    expect(sentinel).toEqual({ _truncated: true, omittedElements: 100 - kept.length });
    expect(jsonBytes(result)).toBeLessThanOrEqual(500);
  });

  test('an array whose first element is too big keeps only the sentinel', () => {
    const value = ['z'.repeat(1_000), 'small'];
    expect(truncateJson(value, 200)).toEqual([{ _truncated: true, omittedElements: 2 }]);
  });

  test('a long object is wrapped in a _truncated_json envelope within budget', () => {
    const value = { description: 'd'.repeat(5_000), count: 3 };
    const serialized = JSON.stringify(value);
    const result = truncateJson(value, 400) as { _truncated_json: string; originalBytes: number };
    expect(Object.keys(result).sort()).toEqual(['_truncated_json', 'originalBytes']);
    expect(result.originalBytes).toBe(bytes(serialized));
    expect(serialized.startsWith(result._truncated_json)).toBe(true);
    expect(result._truncated_json.length).toBeGreaterThan(100);
    expect(jsonBytes(result)).toBeLessThanOrEqual(400);
  });

  test('the object envelope does not split multi-byte characters', () => {
    const value = { text: '€'.repeat(2_000) };
    const result = truncateJson(value, 301) as { _truncated_json: string };
    expect(result._truncated_json).not.toContain('\uFFFD');
    expect(JSON.stringify(value).startsWith(result._truncated_json)).toBe(true);
  });

  test('an object with many short keys still fits the budget once serialised', () => {
    // Every quote of the cut serialisation is escaped again inside the envelope string.
    const value = Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`k${index}`, index]));
    const result = truncateJson(value, 1_000);
    expect(jsonBytes(result)).toBeLessThanOrEqual(1_000);
  });
});

describe('truncateToolResult', () => {
  test('a result within the limit is unchanged', () => {
    const result: ToolResult = {
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' },
      ],
      details: { a: 1 },
    };
    expect(truncateToolResult(result, 1_000)).toEqual(result);
  });

  test('one oversized text block is cut to the limit', () => {
    const result = truncateToolResult({ content: [{ type: 'text', text: 'a'.repeat(10_000) }] }, 500);
    expect(result.content).toHaveLength(1);
    const [text] = textBlocks(result);
    expect(bytes(text!)).toBeLessThanOrEqual(500);
    expect(parseTruncated(text!).total).toBe(10_000);
  });

  test('the total text across several blocks stays within the limit', () => {
    const result = truncateToolResult(
      {
        content: [
          { type: 'text', text: 'a'.repeat(1_000) },
          { type: 'text', text: 'hello' },
          { type: 'text', text: 'world' },
        ],
      },
      200,
    );
    const total = textBlocks(result).reduce((sum, text) => sum + bytes(text), 0);
    expect(total).toBeLessThanOrEqual(200);
    expect(result.content.length).toBeGreaterThanOrEqual(1);
    expect(textBlocks(result)[0]!.startsWith('aaaa')).toBe(true);
  });

  test('blocks that fit together are all kept in order', () => {
    const result = truncateToolResult(
      {
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'x'.repeat(500) },
        ],
      },
      300,
    );
    const texts = textBlocks(result);
    expect(texts[0]).toBe('one');
    expect(texts[1]).toBe('two');
    expect(texts.reduce((sum, text) => sum + bytes(text), 0)).toBeLessThanOrEqual(300);
  });

  test('always keeps at least one block, even with a tiny limit', () => {
    const result = truncateToolResult({ content: [{ type: 'text', text: 'b'.repeat(5_000) }] }, 1);
    expect(result.content.length).toBeGreaterThanOrEqual(1);
    expect(result.content[0]!.type).toBe('text');
  });

  test('an oversized image is replaced by a text note', () => {
    const result = truncateToolResult(
      { content: [{ type: 'image', data: 'A'.repeat(5_000), mimeType: 'image/png' }] },
      1_000,
    );
    expect(result.content).toHaveLength(1);
    const [block] = result.content;
    expect(block!.type).toBe('text');
    const text = block!.type === 'text' ? block!.text : '';
    expect(text).toContain('image omitted');
    expect(text).toContain('5000 bytes');
    expect(text).toContain('image/png');
  });

  test('an image that fits is kept while a later oversized one is replaced', () => {
    const small = { type: 'image' as const, data: 'B'.repeat(100), mimeType: 'image/jpeg' };
    const big = { type: 'image' as const, data: 'C'.repeat(2_000), mimeType: 'image/gif' };
    const result = truncateToolResult({ content: [small, big] }, 1_000);
    expect(result.content[0]).toEqual(small);
    expect(result.content[1]).toMatchObject({ type: 'text', text: expect.stringContaining('image/gif') });
  });

  test('details are bounded too', () => {
    const details = { log: 'l'.repeat(10_000) };
    const result = truncateToolResult({ content: [{ type: 'text', text: 'ok' }], details }, 500);
    expect(result.details).toMatchObject({ originalBytes: jsonBytes(details) });
    expect(jsonBytes(result.details)).toBeLessThanOrEqual(500);
  });
});
