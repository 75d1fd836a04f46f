import { assertConversationId } from '../../src/shared/ids';

test.each(['conv-1', 'a.b:c_d', 'A', '9', 'x'.repeat(200), 'conv-2f6c0b1e-7d0a-4a8e-9d9c-1f2e3d4c5b6a'])(
  'accepts %j and returns it',
  (id) => {
    expect(assertConversationId(id)).toBe(id);
  },
);

test.each([
  ['empty', ''],
  ['parent path', '../x'],
  ['leading dot', '.hidden'],
  ['leading dash', '-x'],
  ['space', 'a b'],
  ['slash', 'a/b'],
  ['backslash', 'a\\b'],
  ['201 characters', 'x'.repeat(201)],
  ['NUL byte', 'a\0b'],
  ['trailing newline', 'abc\n'],
  ['tab', 'a\tb'],
  ['non-ASCII letter', 'café'],
])('rejects %s', (_label, id) => {
  expect(() => assertConversationId(id)).toThrow(/invalid conversation id/);
});
