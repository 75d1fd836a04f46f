import type { ConsoleMarks } from '../../src/console/console-marks';
import { ConsoleSessions, SESSION_HOURS } from '../../src/console/console-sessions';
import { GatewayAuthError, GatewayTokens } from '../../src/gateway/gateway-tokens';

const now = Date.parse('2026-11-28T09:00:00Z');
const HOUR = 3_600_000;
const ENTRIES = [
  { name: 'alice', token: 'alice-token-0123456789', actions: ['*'], expiresAt: '2026-11-28T10:00:00Z' },
  { name: 'bob', token: 'bob-token-0123456789ab', actions: ['*'] },
] satisfies ConstructorParameters<typeof GatewayTokens>[0];

/** Marks as Temporal keeps them, in memory: set once, and remembered for `rememberedMs`. */
function memoryMarks(rememberedMs = 24 * HOUR) {
  const set = new Map<string, number>();
  const marks: ConsoleMarks = {
    async set(key, until) {
      if (set.has(key)) return false;
      set.set(key, until);
      return true;
    },
    async isSet(key) {
      return set.has(key);
    },
    async rememberedMs() {
      return rememberedMs;
    },
  };
  return { marks, set };
}

test('a session ends when its token expires, or after its hours, whichever comes first', async () => {
  const tokens = new GatewayTokens(ENTRIES);
  const sessions = new ConsoleSessions(tokens, memoryMarks().marks);
  const alice = await sessions.open(tokens.byName('alice')!, now);
  expect((await sessions.lookup(alice.cookie, now + 59 * 60_000)).token.name).toBe('alice');
  await expect(sessions.lookup(alice.cookie, now + 60 * 60_000)).rejects.toThrow(GatewayAuthError);

  const bob = await sessions.open(tokens.byName('bob')!, now);
  expect((await sessions.lookup(bob.cookie, now + SESSION_HOURS * HOUR - 60_000)).token.name).toBe('bob');
  await expect(sessions.lookup(bob.cookie, now + SESSION_HOURS * HOUR)).rejects.toThrow(
    'the session has ended',
  );
});

test('a session lasts no longer than Temporal remembers its sign-out', async () => {
  const tokens = new GatewayTokens(ENTRIES);
  const sessions = new ConsoleSessions(tokens, memoryMarks(2 * HOUR).marks);
  const bob = await sessions.open(tokens.byName('bob')!, now);
  expect(bob.session.expiresAt).toBe(now + 2 * HOUR);
  await expect(sessions.lookup(bob.cookie, now + 2 * HOUR)).rejects.toThrow(GatewayAuthError);
});

test('a cookie is the session: another gateway over the same tokens reads it, and nobody can alter or forge one', async () => {
  const { marks } = memoryMarks();
  const tokens = new GatewayTokens(ENTRIES);
  const bob = await new ConsoleSessions(tokens, marks).open(tokens.byName('bob')!, now);
  // Another replica, with its own copy of the tokens.
  const elsewhere = new ConsoleSessions(new GatewayTokens(ENTRIES), marks);
  const read = await elsewhere.lookup(bob.cookie, now);
  expect(read.session).toEqual(bob.session);

  const [payload, signature] = bob.cookie.split('.');
  const fields = JSON.parse(Buffer.from(payload!, 'base64url').toString());
  const altered = (changes: Record<string, unknown>) =>
    `${Buffer.from(JSON.stringify({ ...fields, ...changes })).toString('base64url')}.${signature}`;
  for (const forged of [
    altered({ expiresAt: fields.expiresAt + HOUR }),
    altered({ tokenName: 'alice' }),
    `${payload}.${'A'.repeat(signature!.length)}`,
    `${payload}`,
    `${payload}.${signature}.more`,
    'x'.repeat(5_000),
    '',
  ])
    await expect(elsewhere.lookup(forged, now)).rejects.toThrow(GatewayAuthError);
  // A token of the same name with another secret cannot read the old token's sessions.
  const rotated = new GatewayTokens([{ ...ENTRIES[1]!, token: 'bob-token-rotated-0123' }]);
  await expect(new ConsoleSessions(rotated, marks).lookup(bob.cookie, now)).rejects.toThrow(GatewayAuthError);
});

test('each session has its own check value; signing out ends it wherever it is read, and no other', async () => {
  const { marks } = memoryMarks();
  const tokens = new GatewayTokens(ENTRIES);
  const sessions = new ConsoleSessions(tokens, marks);
  const first = await sessions.open(tokens.byName('bob')!, now);
  const second = await sessions.open(tokens.byName('bob')!, now);
  expect(first.session.csrf).not.toBe(second.session.csrf);
  expect((await sessions.lookup(first.cookie, now)).session.csrf).toBe(first.session.csrf);
  await sessions.close(first.session);
  await expect(sessions.lookup(first.cookie, now)).rejects.toThrow('the session was signed out');
  await expect(
    new ConsoleSessions(new GatewayTokens(ENTRIES), marks).lookup(first.cookie, now),
  ).rejects.toThrow('the session was signed out');
  expect((await sessions.lookup(second.cookie, now)).session.id).toBe(second.session.id);
});

test('a revoked token ends its sessions, and a long request sees it at its next recheck', async () => {
  const tokens = new GatewayTokens(ENTRIES);
  const sessions = new ConsoleSessions(tokens, memoryMarks().marks);
  const bob = await sessions.open(tokens.byName('bob')!, now);
  const who = await sessions.lookup(bob.cookie, now);
  expect(() => sessions.recheck(who, now)).not.toThrow();
  tokens.revoke(who.token);
  expect(() => sessions.recheck(who, now)).toThrow('has been revoked');
  await expect(sessions.lookup(bob.cookie, now)).rejects.toThrow(GatewayAuthError);
});

test('a sign-in nonce is spent once, marked until its link expires; a link Temporal would forget first is refused', async () => {
  const { marks, set } = memoryMarks(HOUR);
  const sessions = new ConsoleSessions(new GatewayTokens(ENTRIES), marks);
  const nonce = 'n1-0123456789abcdef';
  expect(await sessions.spendNonce(nonce, now + 60_000, now)).toBe(true);
  expect(await sessions.spendNonce(nonce, now + 60_000, now + 500)).toBe(false);
  expect(set.get(`link/${nonce}`)).toBe(now + 60_000);
  await expect(sessions.spendNonce('n2-0123456789abcdef', now + HOUR + 1, now)).rejects.toThrow(
    'longer than the Temporal namespace remembers',
  );
  await expect(sessions.spendNonce('../not-a-nonce', now + 60_000, now)).rejects.toThrow(GatewayAuthError);
});
