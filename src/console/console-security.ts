import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import type { ConsoleSession } from './console-sessions';

export const SESSION_COOKIE = 'durable_agent_console';

/**
 * What every console response carries: no script but the console's own file, no style but its
 * stylesheet, images from anywhere only once a person clicked one (the script adds them), no
 * framing, no form posted elsewhere, no referrer outside the console (inside, a form's Origin is what
 * the same-origin check reads), nothing sniffed.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' http: https:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function secureHeaders(reply: FastifyReply): void {
  void reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('referrer-policy', 'same-origin');
  void reply.header('x-frame-options', 'DENY');
  void reply.header('cross-origin-opener-policy', 'same-origin');
}

/**
 * The session cookie (`value`, the signed session): HttpOnly, SameSite=Strict, only for the
 * console's paths, gone when the session ends.
 */
export function sessionCookie(
  request: FastifyRequest,
  value: string,
  session: ConsoleSession,
  now = Date.now(),
): string {
  const seconds = Math.max(0, Math.floor((session.expiresAt - now) / 1_000));
  return `${SESSION_COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${seconds}${secure(request)}`;
}

export function clearedSessionCookie(request: FastifyRequest): string {
  return `${SESSION_COOKIE}=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0${secure(request)}`;
}

/**
 * `; Secure` when the person reached the console over HTTPS: the connection's own TLS, or the
 * forwarded protocol of a proxy the gateway trusts (and of no one else: Fastify reads
 * `X-Forwarded-Proto` only with `trustProxy`, and only from those proxies).
 */
function secure(request: FastifyRequest): string {
  return request.protocol === 'https' ? '; Secure' : '';
}

/** The value of the request's session cookie, if it has one. */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) return part.slice(at + 1).trim() || undefined;
  }
  return undefined;
}

/**
 * Refuses a state change another site could have made: an Origin (or, without one, a Referer) of
 * another host, or a body without the session's check value.
 */
export function checkSameOrigin(request: FastifyRequest): void {
  const source = request.headers.origin ?? request.headers.referer;
  if (source === undefined) return;
  let host: string;
  try {
    host = new URL(source).host;
  } catch {
    throw new GatewayAuthError(403, 'the request came from another site');
  }
  // The host the person asked for: the Host header, or behind a trusted proxy the one it forwards.
  if (host !== request.host) throw new GatewayAuthError(403, 'the request came from another site');
}

export function checkCsrf(request: FastifyRequest, session: ConsoleSession): void {
  checkSameOrigin(request);
  const body = request.body as Record<string, unknown> | undefined;
  const given = typeof body?.csrf === 'string' ? body.csrf : request.headers['x-csrf-token'];
  if (given !== session.csrf) throw new GatewayAuthError(403, 'the request lacks the console session check');
}
