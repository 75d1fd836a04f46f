import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * One-time sign-in links for the console. The operator's CLI and the gateway read the same tokens
 * file; a link is signed with a key only that file holds (the token's SHA-256), so whoever can make
 * one could already act as the token. It names the token, when it stops working and a nonce the
 * gateway accepts once.
 */
export interface SignInLinkFields {
  /** The token's name in the tokens file. */
  name: string;
  /** Milliseconds since the epoch after which the link is refused. */
  expires: number;
  nonce: string;
}

export const SIGN_IN_PATH = '/console/sign-in';
/** How long a link works unless the operator says otherwise. */
export const DEFAULT_LINK_MINUTES = 10;

/** The link for the gateway at `gatewayUrl`. `tokenKey` is the token's SHA-256, hex. */
export function signInLink(gatewayUrl: string, name: string, tokenKey: string, expires: number): string {
  const fields: SignInLinkFields = { name, expires, nonce: randomBytes(16).toString('base64url') };
  const url = new URL(SIGN_IN_PATH, gatewayUrl);
  url.searchParams.set('name', fields.name);
  url.searchParams.set('expires', String(fields.expires));
  url.searchParams.set('nonce', fields.nonce);
  url.searchParams.set('sig', linkSignature(fields, tokenKey));
  return url.toString();
}

/** The fields of a link's query, or why they are not a link. */
export function linkFieldsOf(query: Record<string, unknown>): SignInLinkFields & { sig: string } {
  const { name, expires, nonce, sig } = query;
  if (typeof name !== 'string' || typeof nonce !== 'string' || typeof sig !== 'string')
    throw new Error('the sign-in link is incomplete');
  const at = Number(expires);
  if (!Number.isSafeInteger(at)) throw new Error('the sign-in link is incomplete');
  return { name, expires: at, nonce, sig };
}

/** Whether `sig` is the signature of `fields` with `tokenKey` (compared in constant time). */
export function linkSignatureValid(fields: SignInLinkFields, sig: string, tokenKey: string): boolean {
  const expected = Buffer.from(linkSignature(fields, tokenKey));
  const given = Buffer.from(sig);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

function linkSignature(fields: SignInLinkFields, tokenKey: string): string {
  return createHmac('sha256', `durable-agent console sign-in\n${tokenKey}`)
    .update(`${fields.name}\n${fields.expires}\n${fields.nonce}`)
    .digest('base64url');
}
