import { randomBytes } from 'node:crypto';
import type { GatewayToken } from '../gateway/gateway-api';
import { GatewayAuthError, type GatewayTokens } from '../gateway/gateway-tokens';

/** A person signed in to the console: the token they act as, and the check every change carries. */
export interface ConsoleSession {
  id: string;
  /** The token's SHA-256: the session follows the token, and ends when it expires or is revoked. */
  tokenKey: string;
  /** Sent back with every state change (a form field or a header); a cross-site request cannot read it. */
  csrf: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** How long a session lasts at most, when its token does not expire sooner. */
export const SESSION_HOURS = 12;

/**
 * The console's sessions, kept in the gateway's memory: a restarted gateway asks people to sign in
 * again. Used sign-in nonces are kept until their link would have expired, so a link works once.
 */
export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly usedNonces = new Map<string, number>();

  constructor(private readonly tokens: GatewayTokens) {}

  /** A new session for `token`, ending when the token expires or after SESSION_HOURS. */
  open(token: GatewayToken, now = Date.now()): ConsoleSession {
    this.forgetExpired(now);
    const tokenExpiry =
      token.expiresAt !== undefined ? Date.parse(token.expiresAt) : Number.POSITIVE_INFINITY;
    const session: ConsoleSession = {
      id: randomBytes(32).toString('base64url'),
      tokenKey: this.tokens.keyOf(token),
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: Math.min(now + SESSION_HOURS * 3_600_000, tokenExpiry),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session and its token, or 401 when either has ended (the token expired or was revoked). */
  lookup(id: string | undefined, now = Date.now()): { session: ConsoleSession; token: GatewayToken } {
    const session = id ? this.sessions.get(id) : undefined;
    if (!session || session.expiresAt <= now) {
      if (id) this.sessions.delete(id);
      throw new GatewayAuthError(401, 'not signed in, or the session has ended');
    }
    try {
      return { session, token: this.tokens.byKey(session.tokenKey, now) };
    } catch (error) {
      this.sessions.delete(session.id);
      throw error;
    }
  }

  close(id: string): void {
    this.sessions.delete(id);
  }

  /** True the first time `nonce` is offered before `expires`; false ever after. */
  spendNonce(nonce: string, expires: number, now = Date.now()): boolean {
    this.forgetExpired(now);
    if (this.usedNonces.has(nonce)) return false;
    this.usedNonces.set(nonce, expires);
    return true;
  }

  private forgetExpired(now: number): void {
    for (const [id, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(id);
    for (const [nonce, expires] of this.usedNonces) if (expires <= now) this.usedNonces.delete(nonce);
  }
}
