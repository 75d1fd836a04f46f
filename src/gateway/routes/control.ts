import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConversationNotFoundError } from '../../shared/conversation-errors';
import { AbortBodySchema, EndBodySchema, MessageBodySchema } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { BadRequest } from '../gateway-errors';
import { idempotencyKeyOf, keyedMessageId } from '../idempotency-key';
import { idOf, parseBody } from '../gateway-request';

/**
 * The id a message is sent under: the body's `messageId`, or one made from the request's
 * `Idempotency-Key` (the same for every retry), or none (the client library picks a new one). Either
 * makes a retry safe: the conversation takes a message id once.
 */
function messageIdOf(
  request: FastifyRequest,
  tokenName: string,
  bodyId: string | undefined,
): string | undefined {
  const key = idempotencyKeyOf(request);
  if (key === undefined) return bodyId;
  if (bodyId !== undefined) {
    throw new BadRequest('name the message by its messageId or by an Idempotency-Key header, not both');
  }
  return keyedMessageId(tokenName, key);
}

/** Messages and steering as the token's identity, aborting the run in progress, ending the conversation. */
export function registerControlRoutes(app: FastifyInstance, { agent }: GatewayDeps, access: GatewayAccess) {
  /**
   * A message as the token's identity: sent (queued during a run) or steering the run in progress.
   * Neither reaches a conversation that does not exist (404), except a message from a token that
   * may also start it (with default options): sending is not starting.
   */
  for (const [route, action] of [
    ['messages', 'send'],
    ['steer', 'steer'],
  ] as const) {
    app.post(`/v1/conversations/:id/${route}`, async (request, reply) => {
      const id = idOf(request);
      const token = access.authenticate(request);
      const start = action === 'send' && access.mayStart(token, id);
      try {
        await access.authorizeOn(token, action, id);
      } catch (error) {
        // Looking up the agent found no conversation: one this token may start, it may send to.
        if (!(start && error instanceof ConversationNotFoundError)) throw error;
      }
      const body = parseBody(MessageBodySchema, request.body);
      const messageId = messageIdOf(request, token.name, body.messageId);
      const options = { sender: token.name, ...(messageId !== undefined ? { messageId } : {}) };
      const taken =
        action === 'send'
          ? await agent.send(id, body.text, { ...options, start })
          : await agent.steer(id, body.text, options);
      // A retry of a message taken before is answered as the first delivery was, and says so.
      if (taken.duplicate) void reply.header('idempotent-replayed', 'true');
      return reply.status(202).send({
        conversationId: id,
        messageId: taken.messageId,
        afterSeq: taken.afterSeq,
        ...(action === 'steer'
          ? { interrupting: (taken as { interrupting?: boolean }).interrupting ?? false }
          : {}),
      });
    });
  }

  app.post('/v1/conversations/:id/abort', async (request) => {
    const id = idOf(request);
    const token = await access.allowed(request, 'abort', id);
    const body = parseBody(AbortBodySchema, request.body ?? {});
    return agent.abort(id, { by: token.name, ...(body.reason !== undefined ? { reason: body.reason } : {}) });
  });

  app.post('/v1/conversations/:id/end', async (request, reply) => {
    const id = idOf(request);
    await access.allowed(request, 'end', id);
    const body = parseBody(EndBodySchema, request.body ?? {});
    await agent.end(id, body.reason);
    return reply.status(202).send({ conversationId: id, ending: true });
  });
}
