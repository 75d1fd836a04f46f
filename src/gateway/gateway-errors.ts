import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  MessageIdConflictError,
  UpdateRefusedError,
} from '../shared/conversation-errors';
import { GatewayAuthError } from './gateway-tokens';

/** A request the gateway refuses with 400 for a reason of its own (the client library's are its errors). */
export class BadRequest extends Error {}
/** A request over one of the gateway's limits: 429. */
export class TooManyRequests extends Error {}

/** The gateway's error handler: every failed request is answered `{ "error" }` with its status. */
export function replyWithError(
  error: Error & { statusCode?: number },
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const [status, message] = statusOf(error);
  void reply.status(status).send({ error: message });
}

/** An error's HTTP status, by its class: the client library's errors say what went wrong. */
export function statusOf(error: Error & { statusCode?: number }): [number, string] {
  if (error instanceof GatewayAuthError) return [error.status, error.message];
  if (error instanceof BadRequest || error instanceof InvalidInputError) return [400, error.message];
  if (error instanceof TooManyRequests) return [429, error.message];
  if (error instanceof ConversationNotFoundError) return [404, error.message];
  if (
    error instanceof ConversationEndedError ||
    error instanceof ConversationExistsError ||
    error instanceof MessageIdConflictError ||
    error instanceof UpdateRefusedError
  )
    return [409, error.message];
  // Fastify's own (a body that is not JSON, too large, …).
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return [error.statusCode, error.message];
  return [500, error.message];
}
