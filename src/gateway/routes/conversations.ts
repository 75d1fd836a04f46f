import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { authorize } from '../gateway-tokens';
import { StartConversationBodySchema } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { idOf, parseBody } from '../gateway-request';
import {
  idempotencyKeyOf,
  keyedConversationSuffix,
  keyedMessageId,
  startRequestKey,
} from '../idempotency-key';

/** Starting a conversation (with a first message, when the body has one) and reading its status. */
export function registerConversationRoutes(
  app: FastifyInstance,
  { agent }: GatewayDeps,
  access: GatewayAccess,
) {
  app.post('/v1/conversations', async (request, reply) => {
    const token = access.authenticate(request);
    const body = parseBody(StartConversationBodySchema, request.body);
    // With an Idempotency-Key, a retry names the same conversation and message and is answered alike.
    const key = idempotencyKeyOf(request);
    const suffix = key !== undefined ? keyedConversationSuffix(token.name, key) : randomUUID();
    const conversationId = body.id ?? `${token.conversationPrefixes?.[0] ?? 'conv-'}${suffix}`;
    access.authorizeStart(token, conversationId, body.options?.agentId);
    if (body.text !== undefined) authorize(token, 'send', { conversationId });
    await agent.start(
      conversationId,
      body.options ?? {},
      key !== undefined ? { requestKey: startRequestKey(token.name, key, body) } : {},
    );
    const sent =
      body.text !== undefined
        ? await agent.send(conversationId, body.text, {
            sender: token.name,
            start: false,
            ...(key !== undefined ? { messageId: keyedMessageId(token.name, key) } : {}),
          })
        : undefined;
    if (sent?.duplicate) void reply.header('idempotent-replayed', 'true');
    return reply
      .status(201)
      .send({ conversationId, ...(sent ? { messageId: sent.messageId, afterSeq: sent.afterSeq } : {}) });
  });

  app.get('/v1/conversations/:id', async (request) => {
    const id = idOf(request);
    await access.allowed(request, 'status', id);
    const [execution, status] = await Promise.all([agent.execution(id), agent.status(id)]);
    return { ...status, executionStatus: execution.executionStatus };
  });
}
