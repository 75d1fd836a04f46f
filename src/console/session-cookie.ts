import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * A console session, carried whole by its cookie: no replica keeps it, so every replica, and a
 * restarted gateway, reads the same session from the same cookie. The cookie is signed with the
 * token's SHA-256 (as sign-in links are), which only the tokens file holds: a session cannot be
 * made, lengthened or moved to another token without it, and ends when its token leaves the file
 * or gets another secret.
 */
export interface SessionFields {
  /** Random: what signing out marks as ended. */
  id: string;
  /** The name of the token the session acts as. */
  tokenName: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** Longer than any cookie the gateway makes: what is longer is not read at all. */
const MAX_COOKIE_LENGTH = 1_024;

const PayloadSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  tokenName: z.string().min(1).max(128),
  expiresAt: z.number().int().positive(),
});

/** The cookie's value: the fields, then their signature with the token's key. */
export function sessionCookieValue(fields: SessionFields, tokenKey: string): string {
  const payload = Buffer.from(JSON.stringify(PayloadSchema.parse(fields))).toString('base64url');
  return `${payload}.${sign('session', tokenKey, payload)}`;
}

/**
 * The fields a cookie value carries, once its signature is checked with the key `keyOf` gives for
 * the token it names; undefined for anything else (malformed, too long, signed with another key,
 * naming no token).
 */
export function sessionFieldsOf(
  value: string,
  keyOf: (tokenName: string) => string | undefined,
): SessionFields | undefined {
  if (value.length > MAX_COOKIE_LENGTH) return undefined;
  const [payload, signature, ...rest] = value.split('.');
  if (!payload || !signature || rest.length > 0) return undefined;
  let fields: SessionFields;
  try {
    const parsed = PayloadSchema.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    if (!parsed.success) return undefined;
    fields = parsed.data;
  } catch {
    return undefined;
  }
  const key = keyOf(fields.tokenName);
  if (key === undefined) return undefined;
  const expected = Buffer.from(sign('session', key, payload));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given) ? fields : undefined;
}

/**
 * The session's check value, which every change sends back: derived from its id with the token's
 * key, so a replica knows it without keeping it, and another site cannot know it.
 */
export function sessionCsrf(sessionId: string, tokenKey: string): string {
  return sign('check', tokenKey, sessionId);
}

function sign(purpose: string, tokenKey: string, text: string): string {
  return createHmac('sha256', `durable-agent console ${purpose}\n${tokenKey}`)
    .update(text)
    .digest('base64url');
}
