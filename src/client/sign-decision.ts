import { type KeyObject, createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ApprovalDecision } from '../shared/approvals';
import type { ApprovalModeInput } from '../shared/conversation-api';
import {
  MAX_SIGNATURE_LIFETIME_MS,
  signedApprovalModeText,
  signedDecisionText,
  signedDelegationText,
} from '../shared/signed-decisions';

/** How long a signature made here stays valid: long enough to reach the conversation, short enough to be worthless later. */
const SIGNATURE_LIFETIME_MS = 5 * 60 * 1_000;

/** An Ed25519 private key from a PEM file (`openssl genpkey -algorithm ed25519`), or a clear error. */
export function readSigningKey(file: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read a private key from ${file}: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new Error(`${file} holds a ${key.asymmetricKeyType} key; approvals are signed with Ed25519`);
  }
  return key;
}

/** The decision with its signature over conversation, call, arguments hash, decision, approver, expiry and any budget raise. */
export function signDecision(
  conversationId: string,
  decision: ApprovalDecision & {
    /** The SHA-256 (hex) of the arguments decided on: a signed decision must name them. */
    argumentsSha256: string;
  },
  key: KeyObject,
  now = Date.now(),
  lifetimeMs = SIGNATURE_LIFETIME_MS,
): ApprovalDecision {
  return {
    ...decision,
    ...signed(
      (expiresAt) =>
        signedDecisionText({
          conversationId,
          toolCallId: decision.toolCallId,
          argumentsSha256: decision.argumentsSha256,
          decision: decision.decision,
          by: decision.by,
          expiresAt,
          ...(decision.raise ? { raise: decision.raise } : {}),
        }),
      key,
      now,
      lifetimeMs,
    ),
  };
}

/** An approval-mode change with its signature over conversation, mode, approver and expiry. */
export function signApprovalMode(
  conversationId: string,
  change: ApprovalModeInput & {
    /** Who changes the mode: a signed change must name its signer. */
    by: string;
  },
  key: KeyObject,
  now = Date.now(),
  lifetimeMs = SIGNATURE_LIFETIME_MS,
): ApprovalModeInput {
  return {
    ...change,
    ...signed(
      (expiresAt) => signedApprovalModeText({ conversationId, mode: change.mode, by: change.by, expiresAt }),
      key,
      now,
      lifetimeMs,
    ),
  };
}

/** A signature (base64) over the text for an expiry `lifetimeMs` from `now`, and that expiry. */
function signed(
  text: (expiresAt: number) => string,
  key: KeyObject,
  now: number,
  lifetimeMs: number,
): { signature: string; signatureExpiresAt: number } {
  const expiresAt = now + Math.min(lifetimeMs, MAX_SIGNATURE_LIFETIME_MS);
  return {
    signature: sign(null, Buffer.from(text(expiresAt), 'utf8'), key).toString('base64'),
    signatureExpiresAt: expiresAt,
  };
}

/**
 * `from`'s delegation to `to` until `expiresAt`, signed with `from`'s key: what `to` sends as a
 * decision's `delegation` to decide in `from`'s place under an approval policy.
 */
export function signDelegation(
  from: string,
  to: string,
  expiresAt: number,
  key: KeyObject,
): NonNullable<ApprovalDecision['delegation']> {
  const text = signedDelegationText({ from, to, expiresAt });
  return { from, expiresAt, signature: sign(null, Buffer.from(text), key).toString('base64') };
}
