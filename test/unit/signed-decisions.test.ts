import { generateKeyPairSync, sign } from 'node:crypto';
import {
  fromBase64,
  signedDecisionText,
  verifySignedText,
  type SignedDecisionFields,
} from '../../src/shared/signed-decisions';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { readSigningKey, signDecision } from '../../src/client/sign-decision';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const fields: SignedDecisionFields = {
  conversationId: 'conv-1',
  toolCallId: 'call_1',
  argumentsSha256: 'a'.repeat(64),
  decision: 'allow_once',
  by: 'alice',
  expiresAt: 1_800_000_000_000,
};

describe('signed decisions', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const raw = rawPublicKey(pem, 'alice');
  const signText = (text: string) => sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64');

  test('the signed text is the fields, one per line, in a fixed order', () => {
    expect(signedDecisionText(fields)).toBe(
      [
        'durable-agent-approval-v1',
        'conversation:conv-1',
        'tool_call:call_1',
        `arguments_sha256:${'a'.repeat(64)}`,
        'decision:allow_once',
        'by:alice',
        'expires_at:1800000000000',
      ].join('\n'),
    );
    expect(() => signedDecisionText({ ...fields, by: 'alice\nby:bob' })).toThrow(/line break/);
  });

  test('a budget raise is signed too, so its amount cannot be changed under the signature', () => {
    const raised = signedDecisionText({ ...fields, toolCallId: 'budget-1', raise: { tokens: 50 } });
    expect(raised.split('\n').at(-1)).toBe('raise:tokens=50');
    expect(raised).not.toBe(
      signedDecisionText({ ...fields, toolCallId: 'budget-1', raise: { tokens: 5000 } }),
    );
    expect(signedDecisionText({ ...fields, toolCallId: 'budget-1' })).not.toContain('raise');
  });

  test('a signature made by node crypto verifies in the pure verifier, in base64 and base64url', () => {
    const text = signedDecisionText(fields);
    const signature = signText(text);
    expect(verifySignedText(raw, text, signature)).toBe(true);
    expect(verifySignedText(raw, text, Buffer.from(signature, 'base64').toString('base64url'))).toBe(true);
  });

  test('any other field, another key, a damaged or malformed signature fails without throwing', () => {
    const text = signedDecisionText(fields);
    const signature = signText(text);
    for (const other of [
      { ...fields, decision: 'allow_always' as const },
      { ...fields, toolCallId: 'call_2' },
      { ...fields, argumentsSha256: 'b'.repeat(64) },
      { ...fields, by: 'bob' },
      { ...fields, conversationId: 'conv-2' },
      { ...fields, expiresAt: fields.expiresAt + 1 },
    ])
      expect(verifySignedText(raw, signedDecisionText(other), signature)).toBe(false);
    const otherKey = rawPublicKey(
      generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      'mallory',
    );
    expect(verifySignedText(otherKey, text, signature)).toBe(false);
    const damaged = Buffer.from(signature, 'base64');
    damaged[10] = damaged[10]! ^ 1;
    expect(verifySignedText(raw, text, damaged.toString('base64'))).toBe(false);
    for (const bad of ['', 'not base64!', 'AAAA', signature.slice(0, 40)])
      expect(verifySignedText(raw, text, bad)).toBe(false);
    expect(verifySignedText('short', text, signature)).toBe(false);
  });

  test('base64 decoding matches Buffer for every length', () => {
    for (let length = 0; length < 70; length++) {
      const bytes = Buffer.from(Array.from({ length }, (_, index) => (index * 37 + length) % 256));
      expect(Buffer.from(fromBase64(bytes.toString('base64')))).toEqual(bytes);
      expect(Buffer.from(fromBase64(bytes.toString('base64url')))).toEqual(bytes);
    }
    expect(() => fromBase64('a')).toThrow();
    expect(() => fromBase64('ab$d')).toThrow();
  });

  test('approver keys are read from PEM or raw base64, and only Ed25519', () => {
    expect(rawPublicKey(Buffer.from(fromBase64(raw)).toString('base64'), 'alice')).toBe(raw);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      format: 'pem',
      type: 'spki',
    });
    expect(() => rawPublicKey(rsa.toString(), 'bob')).toThrow(/bob is not an Ed25519 public key/);
  });

  test('the CLI and gateway signer makes what the verifier takes, valid for five minutes', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-keys-'));
    const keyFile = path.join(directory, 'alice.pem');
    await writeFile(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const now = 1_800_000_000_000;
    const decision = signDecision(
      'conv-1',
      { toolCallId: 'call_1', decision: 'reject_once', by: 'alice', argumentsSha256: 'c'.repeat(64) },
      readSigningKey(keyFile),
      now,
    );
    expect(decision.signatureExpiresAt).toBe(now + 5 * 60_000);
    const text = signedDecisionText({
      conversationId: 'conv-1',
      toolCallId: 'call_1',
      argumentsSha256: 'c'.repeat(64),
      decision: 'reject_once',
      by: 'alice',
      expiresAt: now + 5 * 60_000,
    });
    expect(verifySignedText(raw, text, decision.signature!)).toBe(true);
    const rsaFile = path.join(directory, 'rsa.pem');
    await writeFile(
      rsaFile,
      generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    expect(() => readSigningKey(rsaFile)).toThrow(/holds a rsa key; approvals are signed with Ed25519/);
    expect(() => readSigningKey(path.join(directory, 'missing.pem'))).toThrow(/cannot read a private key/);
  });
});
