import { randomBytes } from 'node:crypto';
import { callbackPath, verifyCallbackPath } from '../../src/rap/callback-token';
import { RapToolsetSchema } from '../../src/rap/rap-toolset';

describe('callback URLs', () => {
  const secret = randomBytes(32);
  const binding = { conversationId: 'conv-1', toolCallId: 'call_1', taskToken: Buffer.from([1, 2, 3, 250]) };

  test('carry their binding, which only the secret can make', () => {
    const path = callbackPath(binding, secret);
    expect(verifyCallbackPath(path, secret)).toEqual({ ...binding, taskToken: Buffer.from([1, 2, 3, 250]) });
    expect(verifyCallbackPath(path, randomBytes(32))).toBeUndefined();
  });

  test('any change to the binding or signature is refused', () => {
    const path = callbackPath(binding, secret);
    const other = callbackPath({ ...binding, conversationId: 'conv-2' }, secret);
    const [payload] = path.split('/').pop()!.split('.');
    const [, signature] = other.split('/').pop()!.split('.');
    expect(verifyCallbackPath(`/rap/callback/${payload}.${signature}`, secret)).toBeUndefined();
    expect(verifyCallbackPath(`${path}x`, secret)).toBeUndefined();
    expect(verifyCallbackPath('/rap/callback/', secret)).toBeUndefined();
  });
});

describe('toolset validation', () => {
  const tool = { name: 'get_pr', description: 'Gets a PR', inputSchema: { type: 'object' } };
  test('accepts a valid toolset', () => {
    expect(
      RapToolsetSchema.safeParse({ name: 'gh', endpoint: 'https://t.example/invoke', tools: [tool] }).success,
    ).toBe(true);
  });
  test.each([
    ['no tools', { name: 'gh', endpoint: 'https://t.example/invoke', tools: [] }],
    ['a bad endpoint', { name: 'gh', endpoint: 'nope', tools: [tool] }],
    ['a duplicate name', { name: 'gh', endpoint: 'https://t.example/invoke', tools: [tool, tool] }],
    [
      'a name with spaces',
      { name: 'gh', endpoint: 'https://t.example/invoke', tools: [{ ...tool, name: 'get pr' }] },
    ],
    [
      'no description',
      { name: 'gh', endpoint: 'https://t.example/invoke', tools: [{ name: 'x', inputSchema: {} }] },
    ],
  ])('refuses %s', (_what, toolset) => {
    expect(RapToolsetSchema.safeParse(toolset).success).toBe(false);
  });
});
