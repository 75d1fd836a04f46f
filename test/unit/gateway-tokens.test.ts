import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GatewayAuthError, GatewayTokens } from '../../src/gateway/gateway-tokens';

const ALICE = { name: 'alice', token: 'alice-token-0123456789', actions: ['*'] };
const BOB = { name: 'bob', token: 'bob-token-0123456789ab', actions: ['status'] };

/** A tokens file, rewritten as an operator should: a new file moved over the old one. */
function tokenFile(tokens: unknown[]) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gateway-tokens-'));
  const file = path.join(dir, 'tokens.json');
  let version = 0;
  const write = (content: string) => {
    const next = path.join(dir, `tokens-${++version}.json`);
    writeFileSync(next, content);
    renameSync(next, file);
  };
  write(JSON.stringify({ tokens }));
  return { file, write: (next: unknown[]) => write(JSON.stringify({ tokens: next })), writeRaw: write };
}

test('tokens read from a file follow it: a token removed is refused, one added is known, with no restart', () => {
  const { file, write } = tokenFile([ALICE, BOB]);
  const tokens = GatewayTokens.fromFile(file, { lookEveryMs: 0 });
  const alice = tokens.authenticate(`Bearer ${ALICE.token}`);
  const bob = tokens.authenticate(`Bearer ${BOB.token}`);
  write([ALICE, { ...BOB, name: 'carol', token: 'carol-token-0123456789' }]);
  expect(() => tokens.authenticate(`Bearer ${BOB.token}`)).toThrow('unknown token');
  expect(() => tokens.recheck(bob)).toThrow('has been revoked');
  expect(tokens.byName('bob')).toBeUndefined();
  expect(tokens.authenticate('Bearer carol-token-0123456789').name).toBe('carol');
  // A token the file still holds as it was stays the same token: what authenticated with it goes on.
  expect(() => tokens.recheck(alice)).not.toThrow();
  // One whose scope changed is a new token: what authenticated with the old scope stops.
  write([{ ...ALICE, actions: ['status'] }]);
  expect(() => tokens.recheck(alice)).toThrow(GatewayAuthError);
  expect(tokens.authenticate(`Bearer ${ALICE.token}`).actions).toEqual(['status']);
});

test('a file that cannot be read keeps the tokens read before, and says so once', () => {
  const { file, write, writeRaw } = tokenFile([ALICE]);
  const warnings: string[] = [];
  const tokens = GatewayTokens.fromFile(file, { lookEveryMs: 0, warn: (line) => warnings.push(line) });
  writeRaw('{"tokens": [');
  expect(tokens.authenticate(`Bearer ${ALICE.token}`).name).toBe('alice');
  expect(tokens.authenticate(`Bearer ${ALICE.token}`).name).toBe('alice');
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain('the tokens read before still hold');
  write([BOB]);
  expect(() => tokens.authenticate(`Bearer ${ALICE.token}`)).toThrow('unknown token');
});

test('the file is looked at no more often than asked', () => {
  const { file, write } = tokenFile([ALICE]);
  const tokens = GatewayTokens.fromFile(file, { lookEveryMs: 3_600_000 });
  write([BOB]);
  expect(tokens.authenticate(`Bearer ${ALICE.token}`).name).toBe('alice');
});

test('a token revoked in the process stays revoked when the file is read again', () => {
  const { file, write } = tokenFile([ALICE, BOB]);
  const tokens = GatewayTokens.fromFile(file, { lookEveryMs: 0 });
  tokens.revoke(tokens.byName('bob')!);
  write([ALICE, BOB, { ...BOB, name: 'carol', token: 'carol-token-0123456789' }]);
  expect(tokens.byName('carol')).toBeDefined();
  expect(() => tokens.authenticate(`Bearer ${BOB.token}`)).toThrow('unknown token');
});
