import { blockedOutcome, okOutcome } from '../../src/shared/tool-outcome';
import { sanitizeOutcomeText, sanitizeText } from '../../src/tools/text-sanitizer';

test.each([
  ['NUL', 'a\0b', 'ab'],
  ['DEL', 'a\x7fb', 'ab'],
  ['bell and backspace', 'a\x07\x08b', 'ab'],
  ['vertical tab and form feed', 'a\x0b\x0cb', 'ab'],
  [
    'every other C0 control',
    Array.from({ length: 32 }, (_, code) => String.fromCharCode(code)).join(''),
    '\t\n\r',
  ],
  ['a colour escape, whole', '\x1b[31mred\x1b[0m', 'red'],
  ['a cursor move', 'a\x1b[2Kb\x1b[1;1H', 'ab'],
  ['a window title', '\x1b]0;title\x07text', 'text'],
])('strips %s', (_label, input, expected) => {
  expect(sanitizeText(input)).toBe(expected);
});

test('keeps newline, carriage return, tab and all printable text, non-ASCII included', () => {
  const text = 'line 1\r\n\tindented — café ✓ 😀 \u00a0 {"json": true}';
  expect(sanitizeText(text)).toBe(text);
});

test('an outcome keeps its images, details and fields; only its text changes', () => {
  const outcome = okOutcome({
    content: [
      { type: 'text' as const, text: 'out\0put' },
      { type: 'image' as const, data: 'AAAA', mimeType: 'image/png' },
    ],
    details: { raw: 'x\0y' },
  });
  expect(sanitizeOutcomeText(outcome)).toEqual({
    ...outcome,
    content: [{ type: 'text', text: 'output' }, outcome.content[1]],
  });
});

test("a blocked outcome's reason is cleaned too (its envelope escapes what the reason held)", () => {
  const outcome = blockedOutcome('note', 'hook', 'no\x1b[31m notes\0');
  expect(sanitizeOutcomeText(outcome)).toEqual({ ...outcome, reason: 'no notes' });
});
