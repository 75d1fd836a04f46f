import { sha256Hex } from '../shared/sha256';
import {
  type ApproverKeys,
  MAX_DELEGATION_MS,
  MAX_SIGNATURE_LIFETIME_MS,
  signedDelegationText,
  verifySignedText,
} from '../shared/signed-decisions';
import { workflowTime } from './workflow-time';

/** Signed decisions already taken (hash of the signed text -> when the signature expires): each counts once. */
export type UsedSignatures = Record<string, number>;

/** A decision as it arrives: who made it and, where keys are named, their signature and its expiry. */
export interface SignedInput {
  by: string;
  signature?: string | undefined;
  signatureExpiresAt?: number | undefined;
}

/** A signature `check()` accepted, to be spent once the decision is applied. */
export interface CheckedSignature {
  hash: string;
  expiresAt: number;
}

/**
 * The signature rules every decision of a conversation follows, approvals and policy changes
 * alike: where the worker names approver keys, a decision counts only with a valid Ed25519
 * signature by the key of the approver it names, over the exact text of that decision, expiring
 * within MAX_SIGNATURE_LIFETIME_MS, and never used before (spent signatures are kept until they expire).
 */
export class DecisionSignatures {
  private keys: ApproverKeys | undefined;
  private readonly used: Map<string, number>;

  constructor(used: UsedSignatures = {}) {
    this.used = new Map(Object.entries(used));
  }

  /** The worker's approver keys, from its admission of the conversation. */
  requireKeys(keys: ApproverKeys | undefined): void {
    this.keys = keys;
  }

  get required(): boolean {
    return this.keys !== undefined;
  }

  /**
   * Throws why `input` does not count, given the text its signature must cover for an expiry;
   * touches nothing. Undefined when no keys are named (nothing to check).
   */
  check(input: SignedInput, signedText: (expiresAt: number) => string): CheckedSignature | undefined {
    const keys = this.keys;
    if (!keys) return undefined;
    const key = Object.hasOwn(keys, input.by) ? keys[input.by] : undefined;
    if (key === undefined) throw new Error(`${input.by} has no approver key on this worker`);
    const { signature, signatureExpiresAt } = input;
    if (signature === undefined || signatureExpiresAt === undefined) {
      throw new Error(
        'this worker takes signed decisions only: signature and signatureExpiresAt are missing',
      );
    }
    const now = workflowTime();
    if (signatureExpiresAt <= now) {
      throw new Error(`the signature expired at ${new Date(signatureExpiresAt).toISOString()}`);
    }
    if (signatureExpiresAt > now + MAX_SIGNATURE_LIFETIME_MS) {
      throw new Error(
        `the signature is valid for more than ${MAX_SIGNATURE_LIFETIME_MS / 60_000} minutes; sign for less`,
      );
    }
    const text = signedText(signatureExpiresAt);
    const hash = sha256Hex(text);
    if (this.used.has(hash)) throw new Error('this signed decision was used already');
    if (!verifySignedText(key, text, signature)) {
      throw new Error(`the signature is not ${input.by}'s over this decision`);
    }
    return { hash, expiresAt: signatureExpiresAt };
  }

  /**
   * Throws why `delegation` does not let `to` decide for its delegator now: no keys, not signed by
   * the delegator's key, expired, or longer than MAX_DELEGATION_MS. Touches nothing.
   */
  checkDelegation(delegation: { from: string; expiresAt: number; signature: string }, to: string): void {
    const keys = this.keys;
    if (!keys) throw new Error('a delegation counts only where the worker has approver keys');
    const key = Object.hasOwn(keys, delegation.from) ? keys[delegation.from] : undefined;
    if (key === undefined) throw new Error(`${delegation.from} has no approver key on this worker`);
    const now = workflowTime();
    if (delegation.expiresAt <= now) {
      throw new Error(
        `${delegation.from}'s delegation to ${to} expired at ${new Date(delegation.expiresAt).toISOString()}`,
      );
    }
    if (delegation.expiresAt > now + MAX_DELEGATION_MS) {
      throw new Error(`a delegation lasts at most ${MAX_DELEGATION_MS / 86_400_000} days`);
    }
    const text = signedDelegationText({ from: delegation.from, to, expiresAt: delegation.expiresAt });
    if (!verifySignedText(key, text, delegation.signature)) {
      throw new Error(`the delegation is not ${delegation.from}'s to ${to}`);
    }
  }

  /** Marks a checked signature used, forgetting those that have expired. */
  spend(checked: CheckedSignature | undefined): void {
    if (!checked) return;
    const now = workflowTime();
    for (const [hash, expiresAt] of this.used) if (expiresAt <= now) this.used.delete(hash);
    this.used.set(checked.hash, checked.expiresAt);
  }

  /** What a continued conversation carries over. */
  carry(): UsedSignatures {
    return Object.fromEntries(this.used);
  }
}
