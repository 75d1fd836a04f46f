import { ConsoleSessions, SESSION_HOURS } from '../../src/console/console-sessions';
import { GatewayAuthError, GatewayTokens } from '../../src/gateway/gateway-tokens';

const now = Date.parse('2026-11-28T09:00:00Z');
const tokens = new GatewayTokens([
  { name: 'alice', token: 'alice-token-0123456789', actions: ['*'], expiresAt: '2026-11-28T10:00:00Z' },
  { name: 'bob', token: 'bob-token-0123456789ab', actions: ['*'] },
]);

test('a session ends when its token expires, or after its hours, whichever comes first', () => {
  const sessions = new ConsoleSessions(tokens);
  const alice = sessions.open(tokens.byName('alice')!, now);
  expect(sessions.lookup(alice.id, now + 59 * 60_000).token.name).toBe('alice');
  expect(() => sessions.lookup(alice.id, now + 60 * 60_000)).toThrow(GatewayAuthError);

  const bob = sessions.open(tokens.byName('bob')!, now);
  expect(sessions.lookup(bob.id, now + (SESSION_HOURS * 60 - 1) * 60_000).token.name).toBe('bob');
  expect(() => sessions.lookup(bob.id, now + SESSION_HOURS * 3_600_000)).toThrow('the session has ended');
});

test('an unknown or closed session is refused; each session has its own check value', () => {
  const sessions = new ConsoleSessions(tokens);
  const first = sessions.open(tokens.byName('bob')!, now);
  const second = sessions.open(tokens.byName('bob')!, now);
  expect(first.csrf).not.toBe(second.csrf);
  expect(() => sessions.lookup('made-up', now)).toThrow(GatewayAuthError);
  sessions.close(first.id);
  expect(() => sessions.lookup(first.id, now)).toThrow(GatewayAuthError);
  expect(sessions.lookup(second.id, now).session.id).toBe(second.id);
});

test('a sign-in nonce is spent once, and forgotten once its link has expired', () => {
  const sessions = new ConsoleSessions(tokens);
  expect(sessions.spendNonce('n1', now + 1_000, now)).toBe(true);
  expect(sessions.spendNonce('n1', now + 1_000, now + 500)).toBe(false);
});
