import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AgentClient } from '../runtime/agent-client';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  UpdateRefusedError,
} from '../runtime/conversation-errors';
import { signDecision } from '../client/sign-decision';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import type { ApprovalDecision } from '../shared/approvals';
import {
  AbortBodySchema,
  ApproveBodySchema,
  EndBodySchema,
  type GatewayAction,
  type GatewayToken,
  MessageBodySchema,
  StartConversationBodySchema,
} from '../shared/gateway-api';
import type { ConversationOptionsInput } from '../shared/conversation-options';
import { GatewayAuthError, type GatewayTokens, authorize } from './gateway-tokens';
import { openApiDocument } from './openapi-document';

export interface GatewayDeps {
  agent: AgentClient;
  tokens: GatewayTokens;
  /** Signs decisions as the token's identity, for workers that take signed decisions only. */
  signingKey?: KeyObject;
  /** Between two looks at a conversation while streaming its events, in ms. Default 200. */
  eventPollMs?: number;
}

class BadRequest extends Error {}

/**
 * The HTTP gateway for services that are not Temporal clients. Every `/v1` request names a token;
 * the token's identity is the sender of its messages and the approver of its decisions, whatever
 * the body says, and its scope (actions, agents, conversation id prefixes) is checked first.
 */
export function createGateway(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  const { agent } = deps;

  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    const [status, message] = statusOf(error);
    void reply.status(status).send({ error: message });
  });

  app.get('/openapi.json', async () => openApiDocument());

  /** Authenticates, then authorises `action` on the conversation (its agent looked up when the token is limited to some). */
  async function allowed(
    request: FastifyRequest,
    action: GatewayAction,
    conversationId: string,
  ): Promise<GatewayToken> {
    const token = deps.tokens.authenticate(request.headers.authorization);
    authorize(token, action, { conversationId });
    if (token.agents)
      authorize(token, action, { agentId: (await agent.status(conversationId)).agentId ?? DEFAULT_AGENT_ID });
    return token;
  }
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  app.post('/v1/conversations', async (request, reply) => {
    const token = deps.tokens.authenticate(request.headers.authorization);
    const body = parse(StartConversationBodySchema, request.body);
    const options = (body.options ?? {}) as ConversationOptionsInput;
    const conversationId = body.id ?? `${token.conversationPrefixes?.[0] ?? 'conv-'}${randomUUID()}`;
    authorize(token, 'start', { conversationId, agentId: options.agentId ?? DEFAULT_AGENT_ID });
    if (body.text !== undefined) authorize(token, 'send', { conversationId });
    await agent.start(conversationId, options);
    const sent =
      body.text !== undefined
        ? await agent.send(conversationId, body.text, { sender: token.name })
        : undefined;
    return reply
      .status(201)
      .send({ conversationId, ...(sent ? { messageId: sent.messageId, afterSeq: sent.afterSeq } : {}) });
  });

  app.get('/v1/conversations/:id', async (request) => {
    const id = idOf(request);
    await allowed(request, 'status', id);
    const [execution, status] = await Promise.all([agent.execution(id), agent.status(id)]);
    return { ...status, executionStatus: execution.executionStatus };
  });

  app.get('/v1/conversations/:id/approvals', async (request) => {
    const id = idOf(request);
    await allowed(request, 'status', id);
    return { pending: await agent.pendingApprovals(id) };
  });

  /** A message as the token's identity: sent (queued during a run) or steering the run in progress. */
  for (const [route, action] of [
    ['messages', 'send'],
    ['steer', 'steer'],
  ] as const) {
    app.post(`/v1/conversations/:id/${route}`, async (request, reply) => {
      const id = idOf(request);
      const token = await allowed(request, action, id);
      const body = parse(MessageBodySchema, request.body);
      const options = { sender: token.name, ...(body.messageId ? { messageId: body.messageId } : {}) };
      const taken =
        action === 'send'
          ? await agent.send(id, body.text, options)
          : await agent.steer(id, body.text, options);
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
    const token = await allowed(request, 'abort', id);
    const body = parse(AbortBodySchema, request.body ?? {});
    return agent.abort(id, { by: token.name, ...(body.reason !== undefined ? { reason: body.reason } : {}) });
  });

  app.post('/v1/conversations/:id/end', async (request, reply) => {
    const id = idOf(request);
    await allowed(request, 'end', id);
    const body = parse(EndBodySchema, request.body ?? {});
    await agent.end(id, body.reason);
    return reply.status(202).send({ conversationId: id, ending: true });
  });

  app.post('/v1/conversations/:id/approvals/:toolCallId', async (request) => {
    const id = idOf(request);
    const { toolCallId } = request.params as { toolCallId: string };
    const token = await allowed(request, 'approve', id);
    const body = parse(ApproveBodySchema, request.body);
    // The approver is the token's identity, never a name from the body.
    const decision: ApprovalDecision & { argumentsSha256: string } = {
      toolCallId,
      decision: body.decision,
      by: token.name,
      argumentsSha256: body.argumentsSha256,
      ...(body.reason !== undefined ? { reason: body.reason } : {}),
    };
    if (body.signature !== undefined) {
      if (body.signatureExpiresAt === undefined)
        throw new BadRequest('a signature needs its signatureExpiresAt');
      return agent.approve(id, {
        ...decision,
        signature: body.signature,
        signatureExpiresAt: body.signatureExpiresAt,
      });
    }
    return agent.approve(id, deps.signingKey ? signDecision(id, decision, deps.signingKey) : decision);
  });

  app.get('/v1/conversations/:id/events', async (request, reply) => {
    const id = idOf(request);
    await allowed(request, 'events', id);
    const resumeFrom = request.headers['last-event-id'] ?? (request.query as { after?: string }).after ?? '0';
    const after = Number(resumeFrom);
    if (!Number.isInteger(after) || after < 0)
      throw new BadRequest(`not an event sequence number: ${JSON.stringify(resumeFrom)}`);
    await agent.execution(id);
    await streamEvents(reply, async (write, gone) => {
      // Workflow events carry their sequence number as the SSE id, so a client resumes from the
      // last one; model text and tool progress, made by watching and never kept, carry none.
      const keepAlive = setInterval(() => write(': keep-alive\n\n'), 15_000);
      try {
        for await (const event of agent.watch(id, {
          afterSeq: after,
          signal: gone,
          ...(deps.eventPollMs ? { pollMs: deps.eventPollMs } : {}),
        })) {
          const synthetic = event.type === 'model_text' || event.type === 'tool_execution_update';
          write(
            `${synthetic ? '' : `id: ${event.seq}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
          );
        }
      } finally {
        clearInterval(keepAlive);
      }
      if (gone.aborted) return;
      const { executionStatus } = await agent.execution(id);
      write(`event: end\ndata: ${JSON.stringify({ executionStatus })}\n\n`);
    });
  });

  return app;
}

/**
 * Streams server-sent events until `produce` returns, fails, or the client goes away: `gone` is
 * aborted then (stopping any call to Temporal in flight), and a write throws.
 */
async function streamEvents(
  reply: FastifyReply,
  produce: (write: (chunk: string) => void, gone: AbortSignal) => Promise<void>,
): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  const gone = new AbortController();
  raw.on('close', () => gone.abort());
  class Gone extends Error {}
  const write = (chunk: string) => {
    if (gone.signal.aborted || raw.destroyed) throw new Gone();
    raw.write(chunk);
  };
  try {
    write(': stream open\n\n');
    await produce(write, gone.signal);
  } catch (error) {
    if (!(error instanceof Gone) && !gone.signal.aborted && !raw.destroyed) {
      raw.write(`event: error\ndata: ${JSON.stringify({ error: statusOf(error as Error)[1] })}\n\n`);
    }
  } finally {
    if (!raw.destroyed) raw.end();
  }
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new BadRequest(`invalid body: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`);
  return parsed.data;
}

function statusOf(error: Error & { statusCode?: number }): [number, string] {
  if (error instanceof GatewayAuthError) return [error.status, error.message];
  if (error instanceof BadRequest) return [400, error.message];
  if (error instanceof ConversationNotFoundError) return [404, error.message];
  if (error instanceof ConversationEndedError || error instanceof UpdateRefusedError)
    return [409, error.message];
  if (/already exists/.test(error.message)) return [409, error.message];
  if (/^invalid /.test(error.message)) return [400, error.message];
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return [error.statusCode, error.message];
  return [500, error.message];
}
