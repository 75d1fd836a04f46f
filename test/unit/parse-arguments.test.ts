import { parseArguments } from '../../src/workflows/tool-fan-out';

test('a JSON object is parsed', () => {
  expect(parseArguments('{"path":"a.txt","n":2,"nested":{"x":[1]}}')).toEqual({
    ok: true,
    value: { path: 'a.txt', n: 2, nested: { x: [1] } },
  });
});

test.each(['', '   ', '\n\t'])('blank text %j is an empty object', (raw) => {
  expect(parseArguments(raw)).toEqual({ ok: true, value: {} });
});

test('malformed JSON is an error that quotes the text', () => {
  const parsed = parseArguments('{"path": "a.txt"');
  expect(parsed.ok).toBe(false);
  if (!parsed.ok) {
    expect(parsed.error).toContain('not valid JSON');
    expect(parsed.error).toContain('{"path": "a.txt"');
  }
});

test('the quoted text is cut to 200 characters', () => {
  const raw = `{${'x'.repeat(1_000)}`;
  const parsed = parseArguments(raw);
  expect(parsed.ok).toBe(false);
  if (!parsed.ok) {
    expect(parsed.error.endsWith(raw.slice(0, 200))).toBe(true);
    expect(parsed.error).not.toContain(raw.slice(0, 201));
  }
});

test.each(['[1,2]', '"text"', '42', 'null', 'true'])('%s is not an object', (raw) => {
  expect(parseArguments(raw)).toEqual({ ok: false, error: 'arguments must be a JSON object' });
});
