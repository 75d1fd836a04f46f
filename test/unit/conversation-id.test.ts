import { assertConversationId, sessionIdProblem } from '../../src/shared/ids';

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
  ['dots in the middle', 'a..b'],
  ['trailing dots', 'conv..'],
])('rejects %s', (_label, id) => {
  expect(() => assertConversationId(id)).toThrow(/invalid conversation id/);
});

describe('session id validation', () => {
  test.each([
    ['empty', '', 'it is empty'],
    ['parent path', '..', "it contains '..'"],
    ['traversal inside', 'a/../b', 'it contains a directory separator'],
    ['dots only in the middle', 'a..b', "it contains '..'"],
    ['slash', 'a/b', 'it contains a directory separator'],
    ['backslash', 'a\\b', 'it contains a directory separator'],
    ['NUL byte', 'a\0b', 'it contains a NUL byte'],
    ['newline', 'a\nb', 'it contains a control character'],
    ['escape', 'a\x1bb', 'it contains a control character'],
    ['DEL', 'a\x7fb', 'it contains a control character'],
    ['257 bytes', 'x'.repeat(257), 'it is over 256 bytes'],
    ['257 bytes in fewer characters', 'é'.repeat(129), 'it is over 256 bytes'],
  ])('refuses %s', (_label, id, problem) => {
    expect(sessionIdProblem(id)).toBe(problem);
  });

  test.each(['conv-1', 'a.b', 'x'.repeat(256), 'é'.repeat(128), 'Team chat #4'])('accepts %j', (id) => {
    expect(sessionIdProblem(id)).toBeUndefined();
  });

  test('a conversation id is refused for the session id reason first', () => {
    expect(() => assertConversationId('a..b')).toThrow(`invalid conversation id "a..b": it contains '..'`);
  });
});
