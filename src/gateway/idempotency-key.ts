import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { BadRequest } from './gateway-errors';

/**
 * A request's `Idempotency-Key` header: the caller's name for one request, sent again unchanged
 * when it retries. Keys are the token's own: two tokens using the same key name two requests.
 */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !/^[\x20-\x7e]{1,255}$/.test(header)) {
    throw new BadRequest('Idempotency-Key is 1 to 255 printable ASCII characters, given once');
  }
  return header;
}

/** The id of the message a keyed request sends: the same for every retry of it by the same token. */
export function keyedMessageId(tokenName: string, key: string): string {
  return `key-${digest(['message', tokenName, key]).slice(0, 40)}`;
}

/** The id of the conversation a keyed start request makes when its body names none. */
export function keyedConversationSuffix(tokenName: string, key: string): string {
  return digest(['conversation', tokenName, key]).slice(0, 32);
}

/**
 * What a keyed start request is known by, kept with the conversation it starts: its token, its key
 * and its whole body, so a retry finds itself and the same key with another body does not.
 */
export function startRequestKey(tokenName: string, key: string, body: unknown): string {
  return digest(['start', tokenName, key, body]);
}

function digest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
