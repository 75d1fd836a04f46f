import { randomBytes } from 'node:crypto';
import type { GatewayToken } from '../gateway/gateway-api';
import { GatewayAuthError, type GatewayTokens } from '../gateway/gateway-tokens';
import type { ConsoleMarks } from './console-marks';
import { type SessionFields, sessionCookieValue, sessionCsrf, sessionFieldsOf } from './session-cookie';

/** A person signed in to the console: the token they act as, and the check every change carries. */
export interface ConsoleSession extends SessionFields {
  /** Sent back with every state change (a form field or a header); a cross-site request cannot read it. */
  csrf: string;
}

/** A request's person: their session and the token they act as. */
export interface SignedIn {
  session: ConsoleSession;
  token: GatewayToken;
}

/** How long a session lasts at most, when its token does not expire sooner. */
export const SESSION_HOURS = 12;
/** A sign-in link's nonce: what `signInLink` makes, bounded before it names a mark. */
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

const NOT_SIGNED_IN = 'not signed in, or the session has ended';

/**
 * The console's sessions, the same on every gateway replica and across restarts: a session is its
 * signed cookie (`session-cookie.ts`), and what replicas must agree on, a used sign-in link and a
 * signed-out session, is a mark every replica sees (`console-marks.ts`), kept until the link or
 * session has expired. A session also ends with its token: expired, or gone from the tokens file.
 */
export class ConsoleSessions {
  constructor(
    private readonly tokens: GatewayTokens,
    private readonly marks: ConsoleMarks,
  ) {}

  /**
   * A new session for `token` and its cookie's value. It ends when the token expires, after
   * SESSION_HOURS, or sooner when the marks are not remembered that long (a sign-out must be).
   */
  async open(token: GatewayToken, now = Date.now()): Promise<{ session: ConsoleSession; cookie: string }> {
    const remembered = await this.marks.rememberedMs();
    const tokenExpiry =
      token.expiresAt !== undefined ? Date.parse(token.expiresAt) : Number.POSITIVE_INFINITY;
    const fields: SessionFields = {
      id: randomBytes(24).toString('base64url'),
      tokenName: token.name,
      expiresAt: Math.min(now + SESSION_HOURS * 3_600_000, now + remembered, tokenExpiry),
    };
    const key = this.tokens.keyOf(token);
    return {
      session: { ...fields, csrf: sessionCsrf(fields.id, key) },
      cookie: sessionCookieValue(fields, key),
    };
  }

  /** The session a cookie carries and its token, or 401: ended, signed out, or its token gone. */
  async lookup(cookie: string | undefined, now = Date.now()): Promise<SignedIn> {
    const who = this.verify(cookie, now);
    if (await this.marks.isSet(signedOutKey(who.session.id)))
      throw new GatewayAuthError(401, 'the session was signed out');
    return who;
  }

  /**
   * Throws 401 once a session looked up earlier has ended, or its token has: what a long request
   * (the run stream) asks before each write. Signing out is told by `lookup`, which the stream asks
   * now and then.
   */
  recheck(who: SignedIn, now = Date.now()): void {
    if (who.session.expiresAt <= now) throw new GatewayAuthError(401, NOT_SIGNED_IN);
    this.tokens.recheck(who.token, now);
  }

  /** Ends the session on every replica. */
  async close(session: ConsoleSession): Promise<void> {
    await this.marks.set(signedOutKey(session.id), session.expiresAt);
  }

  /**
   * True the first time a link's nonce is offered to any replica; false ever after. A link that
   * would outlive the marks is refused, since its nonce could be forgotten while it still works.
   */
  async spendNonce(nonce: string, expires: number, now = Date.now()): Promise<boolean> {
    if (!NONCE.test(nonce)) throw new GatewayAuthError(401, 'the sign-in link is not valid');
    const remembered = await this.marks.rememberedMs();
    if (expires - now > remembered)
      throw new GatewayAuthError(
        401,
        `the sign-in link works for longer than the Temporal namespace remembers a used one (${Math.floor(
          remembered / 60_000,
        )} minutes): make a shorter one`,
      );
    return this.marks.set(`link/${nonce}`, expires);
  }

  /** The session the cookie carries, checked by its signature, expiry and token; no mark asked. */
  private verify(cookie: string | undefined, now: number): SignedIn {
    let token: GatewayToken | undefined;
    const keyOf = (name: string) => {
      token = this.tokens.byName(name);
      return token && this.tokens.keyOf(token);
    };
    const fields = cookie ? sessionFieldsOf(cookie, keyOf) : undefined;
    if (!fields || !token || fields.expiresAt <= now) throw new GatewayAuthError(401, NOT_SIGNED_IN);
    this.tokens.recheck(token, now);
    return { session: { ...fields, csrf: sessionCsrf(fields.id, this.tokens.keyOf(token)) }, token };
  }
}

function signedOutKey(sessionId: string): string {
  return `signed-out/${sessionId}`;
}
