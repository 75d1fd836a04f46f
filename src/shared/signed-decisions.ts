import { ed25519 } from '@noble/curves/ed25519';
import type { ApprovalDecisionKind } from './approvals';
import { BUDGET_KINDS, type BudgetRaise } from './budget';

/**
 * Signed approval decisions. When a worker's operator names approver keys, a decision counts only
 * with an Ed25519 signature, by the key of the approver it names, over exactly this text (UTF-8,
 * lines joined by "\n", no trailing newline):
 *
 *     durable-agent-approval-v1
 *     conversation:<conversation id>
 *     tool_call:<tool call id>
 *     arguments_sha256:<SHA-256 of the call's whole arguments text, lowercase hex>
 *     decision:<allow_once | allow_always | reject_once | reject_always>
 *     by:<approver name>
 *     expires_at:<milliseconds since the epoch, an integer>
 *
 * and, only for a decision that raises a budget, a last line naming each part raised in this order:
 *
 *     raise:tokens=<n>,toolCalls=<n>,deadlineMs=<n>
 *
 * So a signature approves one call with one set of arguments in one conversation, by one approver,
 * for a short while, and nothing else. Verification is pure code, so workflow code runs it.
 */
const SIGNED_DECISION_VERSION = 'durable-agent-approval-v1';

/** The longest a signed decision may stay valid: seen signatures are remembered until they expire. */
export const MAX_SIGNATURE_LIFETIME_MS = 60 * 60 * 1_000;

export interface SignedDecisionFields {
  conversationId: string;
  toolCallId: string;
  argumentsSha256: string;
  decision: ApprovalDecisionKind;
  by: string;
  expiresAt: number;
  raise?: BudgetRaise;
}

/** The exact text an approver signs. */
export function signedDecisionText(fields: SignedDecisionFields): string {
  return signedLines(SIGNED_DECISION_VERSION, [
    ['conversation', fields.conversationId],
    ['tool_call', fields.toolCallId],
    ['arguments_sha256', fields.argumentsSha256],
    ['decision', fields.decision],
    ['by', fields.by],
    ['expires_at', fields.expiresAt],
    ...(fields.raise ? [['raise', raiseText(fields.raise)] as [string, string]] : []),
  ]);
}

function raiseText(raise: BudgetRaise): string {
  return BUDGET_KINDS.filter((kind) => raise[kind] !== undefined)
    .map((kind) => `${kind}=${raise[kind]}`)
    .join(',');
}

/** A version line, then `label:value` lines; a value with a line break could forge another line, so it is refused. */
function signedLines(version: string, lines: Array<[string, string | number]>): string {
  for (const [label, value] of lines) {
    if (typeof value === 'string' && /[\r\n]/.test(value))
      throw new Error(`${label} may not contain a line break`);
  }
  return [version, ...lines.map(([label, value]) => `${label}:${value}`)].join('\n');
}

/**
 * A change of a running conversation's approval mode that asks for less, signed the same way over
 * this text:
 *
 *     durable-agent-approval-mode-v1
 *     conversation:<conversation id>
 *     approval_mode:<default | auto>
 *     by:<approver name>
 *     expires_at:<milliseconds since the epoch, an integer>
 */
const SIGNED_MODE_VERSION = 'durable-agent-approval-mode-v1';

export interface SignedModeFields {
  conversationId: string;
  mode: string;
  by: string;
  expiresAt: number;
}

/** The exact text an approver signs to loosen a conversation's approval mode. */
export function signedApprovalModeText(fields: SignedModeFields): string {
  return signedLines(SIGNED_MODE_VERSION, [
    ['conversation', fields.conversationId],
    ['approval_mode', fields.mode],
    ['by', fields.by],
    ['expires_at', fields.expiresAt],
  ]);
}

/**
 * A delegation: an approver away lets another decide in their place, under approval policies,
 * until it expires, signed by the delegator over this text:
 *
 *     durable-agent-delegation-v1
 *     from:<delegator>
 *     to:<delegate>
 *     expires_at:<milliseconds since the epoch, an integer>
 */
const SIGNED_DELEGATION_VERSION = 'durable-agent-delegation-v1';

/** The longest a delegation may last. */
export const MAX_DELEGATION_MS = 30 * 24 * 60 * 60 * 1_000;

export interface SignedDelegationFields {
  from: string;
  to: string;
  expiresAt: number;
}

/** The exact text a delegator signs. */
export function signedDelegationText(fields: SignedDelegationFields): string {
  return signedLines(SIGNED_DELEGATION_VERSION, [
    ['from', fields.from],
    ['to', fields.to],
    ['expires_at', fields.expiresAt],
  ]);
}

/** Approver name -> raw 32-byte Ed25519 public key, base64url (what the worker hands its conversations). */
export type ApproverKeys = Record<string, string>;

/** Whether `signature` (base64 or base64url of 64 bytes) is `publicKey`'s over `text`. Never throws. */
export function verifySignedText(publicKey: string, text: string, signature: string): boolean {
  try {
    const key = fromBase64(publicKey);
    const sig = fromBase64(signature);
    if (key.length !== 32 || sig.length !== 64) return false;
    return ed25519.verify(sig, new TextEncoder().encode(text), key, { zip215: false });
  } catch {
    return false;
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes base64 or base64url, padded or not; throws on anything else. (No Buffer in workflow code.) */
export function fromBase64(text: string): Uint8Array {
  const clean = text.trim().replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (!/^[A-Za-z0-9+/]*$/.test(clean) || clean.length % 4 === 1) throw new Error('not base64');
  const bytes = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let index = 0;
  for (const char of clean) {
    value = (value << 6) | ALPHABET.indexOf(char);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[index++] = (value >> bits) & 0xff;
    }
  }
  return bytes;
}
