import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Cleanups } from '../../src/cli/cleanups';
import { parseApproveArgs } from '../../src/cli/commands/approve';
import { delegateCommand, parseDelegateArgs } from '../../src/cli/commands/delegate';
import { signedDelegationText, verifySignedText } from '../../src/shared/signed-decisions';
import { rawPublicKey } from '../../src/worker/floor-settings';

test('delegate prints a delegation signed by the delegator, which approve --delegation sends with the decision', async () => {
  const bob = generateKeyPairSync('ed25519');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'delegate-'));
  const keyFile = path.join(dir, 'bob.pem');
  await writeFile(keyFile, bob.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString());
  const written: string[] = [];
  const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  const before = Date.now();
  try {
    expect(
      await delegateCommand(['--to', 'dave', '--for', '1d', '--key', keyFile, '--by', 'bob'], new Cleanups()),
    ).toBe(0);
  } finally {
    write.mockRestore();
  }
  const delegation = JSON.parse(written.join('')) as {
    from: string;
    to: string;
    expiresAt: number;
    signature: string;
  };
  expect(delegation).toMatchObject({ from: 'bob', to: 'dave' });
  expect(delegation.expiresAt - before).toBeGreaterThanOrEqual(86_400_000);
  expect(delegation.expiresAt - before).toBeLessThan(86_400_000 + 60_000);
  const bobKey = rawPublicKey(bob.publicKey.export({ format: 'pem', type: 'spki' }).toString(), 'bob');
  const text = signedDelegationText({ from: 'bob', to: 'dave', expiresAt: delegation.expiresAt });
  expect(verifySignedText(bobKey, text, delegation.signature)).toBe(true);
  expect(verifySignedText(bobKey, text.replace('to:dave', 'to:erin'), delegation.signature)).toBe(false);

  const file = path.join(dir, 'delegation.json');
  await writeFile(file, written.join(''));
  expect(parseApproveArgs(['c-1', 'call_1', '--by', 'dave', '--delegation', file]).decision).toEqual({
    toolCallId: 'call_1',
    decision: 'allow_once',
    by: 'dave',
    delegation: { from: 'bob', expiresAt: delegation.expiresAt, signature: delegation.signature },
  });
  await writeFile(file, JSON.stringify({ from: 'bob', expiresAt: 1, signature: 'x', extra: true }));
  expect(() => parseApproveArgs(['c-1', 'call_1', '--delegation', file])).toThrow(
    /is no delegation: unknown key "extra"/,
  );
});

test('delegate says what it needs', () => {
  expect(() => parseDelegateArgs(['--for', '1d', '--key', 'k'])).toThrow(/--to NAME/);
  expect(() => parseDelegateArgs(['--to', 'dave', '--key', 'k'])).toThrow(/--for DURATION/);
  expect(() => parseDelegateArgs(['--to', 'dave', '--for', '1d'])).toThrow(/--key FILE/);
  expect(() => parseDelegateArgs(['--to', 'dave', '--for', '31d', '--key', 'k'])).toThrow(/at most 30d/);
  expect(parseDelegateArgs(['--to', 'dave', '--for', '8h', '--key', 'k'], () => 'bob')).toEqual({
    from: 'bob',
    to: 'dave',
    forMs: 8 * 3_600_000,
    keyFile: 'k',
  });
});
