import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { AgentClient } from '../client/agent-client';
import {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  UpdateRefusedError,
  invalidInput,
} from '../shared/conversation-errors';
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
} from './gateway-api';
import { GatewayAuthError, type GatewayTokens, authorize } from './gateway-tokens';
import { openApiDocument } from './openapi-document';

export interface GatewayDeps {
  agent: AgentClient;
  tokens: GatewayTokens;
  /** Signs decisions as the token's identity, for workers that take signed decisions only. */
  signingKey?: KeyObject;
  /** Between two looks at a conversation while streaming its events, in ms. Default 200. */
  eventPollMs?: number;
  /** Event streams one token may have open at once; the next is refused with 429. Default 8. */
  maxStreamsPerToken?: number;
  /** Between two keep-alive comments of an event stream (each also rechecks the token), in ms. Default 15000. */
  keepAliveMs?: number;
}

export const DEFAULT_MAX_STREAMS_PER_TOKEN = 8;

class BadRequest extends Error {}
class TooManyRequests extends Error {}

/**
 * The HTTP gateway for services that are not Temporal clients. Every `/v1` request names a token;
 * the token's identity is the sender of its messages and the approver of its decisions, whatever
 * the body says, and its scope (actions, agents, conversation id prefixes) is checked first.
 */
export function createGateway(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  const { agent } = deps;
  const maxStreams = deps.maxStreamsPerToken ?? DEFAULT_MAX_STREAMS_PER_TOKEN;
  /** Event streams open, by token. */
  const streams = new Map<GatewayToken, number>();

  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    const [status, message] = statusOf(error);
    void reply.status(status).send({ error: message });
  });

  app.get('/openapi.json', async () => openApiDocument());

  /** Authenticates, then authorises `action` on the conversation. */
  async function allowed(
    request: FastifyRequest,
    action: GatewayAction,
    conversationId: string,
  ): Promise<GatewayToken> {
    const token = deps.tokens.authenticate(request.headers.authorization);
    await authorizeOn(token, action, conversationId);
    return token;
  }
  /** Authorises `action` on the conversation, its agent looked up when the token is limited to some. */
  async function authorizeOn(token: GatewayToken, action: GatewayAction, conversationId: string) {
    authorize(token, action, { conversationId });
    if (token.agents)
      authorize(token, action, { agentId: (await agent.status(conversationId)).agentId ?? DEFAULT_AGENT_ID });
  }
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  /** The check every start passes, explicit or by a message: this token may start here, for this agent. */
  const authorizeStart = (token: GatewayToken, conversationId: string, agentId: string | undefined) =>
    authorize(token, 'start', { conversationId, agentId: agentId ?? DEFAULT_AGENT_ID });
  /** Whether a message from `token` may start `conversationId` (with default options) when there is none. */
  const mayStart = (token: GatewayToken, conversationId: string) => {
    try {
      authorizeStart(token, conversationId, undefined);
      return true;
    } catch (error) {
      if (error instanceof GatewayAuthError) return false;
      throw error;
    }
  };

  app.post('/v1/conversations', async (request, reply) => {
    const token = deps.tokens.authenticate(request.headers.authorization);
    const body = parse(StartConversationBodySchema, request.body);
    const conversationId = body.id ?? `${token.conversationPrefixes?.[0] ?? 'conv-'}${randomUUID()}`;
    authorizeStart(token, conversationId, body.options?.agentId);
    if (body.text !== undefined) authorize(token, 'send', { conversationId });
    await agent.start(conversationId, body.options ?? {});
    const sent =
      body.text !== undefined
        ? await agent.send(conversationId, body.text, { sender: token.name, start: false })
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
      const token = deps.tokens.authenticate(request.headers.authorization);
      const start = action === 'send' && mayStart(token, id);
      try {
        await authorizeOn(token, action, id);
      } catch (error) {
        // Looking up the agent found no conversation: one this token may start, it may send to.
        if (!(start && error instanceof ConversationNotFoundError)) throw error;
      }
      const body = parse(MessageBodySchema, request.body);
      const options = { sender: token.name, ...(body.messageId ? { messageId: body.messageId } : {}) };
      const taken =
        action === 'send'
          ? await agent.send(id, body.text, { ...options, start })
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
      ...(body.raise !== undefined ? { raise: body.raise } : {}),
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

  /**
   * Events as server-sent events. The token is checked again before every write (events and
   * keep-alives) and when it expires: a token that expires or is revoked ends its streams with an
   * `error` event. A token has at most `maxStreamsPerToken` streams open; the next is 429.
   */
  app.get('/v1/conversations/:id/events', async (request, reply) => {
    const id = idOf(request);
    const token = await allowed(request, 'events', id);
    const resumeFrom = request.headers['last-event-id'] ?? (request.query as { after?: string }).after ?? '0';
    const after = Number(resumeFrom);
    if (!Number.isInteger(after) || after < 0)
      throw new BadRequest(`not an event sequence number: ${JSON.stringify(resumeFrom)}`);
    // Counted and taken with no await between, so streams opened together cannot pass the cap together.
    const open = streams.get(token) ?? 0;
    if (open >= maxStreams) {
      throw new TooManyRequests(
        `the token ${token.name} has ${open} event streams open, the most it may have: close one first`,
      );
    }
    streams.set(token, open + 1);
    try {
      await agent.execution(id);
      await streamEvents(reply, {
        check: () => deps.tokens.recheck(token),
        ...(token.expiresAt !== undefined ? { checkAt: Date.parse(token.expiresAt) } : {}),
        keepAliveMs: deps.keepAliveMs ?? 15_000,
        produce: async (write, stop) => {
          // Workflow events carry their sequence number as the SSE id, so a client resumes from the
          // last one; model text and tool progress, made by watching and never kept, carry none.
          for await (const event of agent.watch(id, {
            afterSeq: after,
            signal: stop,
            ...(deps.eventPollMs ? { pollMs: deps.eventPollMs } : {}),
          })) {
            const synthetic = event.type === 'model_text' || event.type === 'tool_execution_update';
            write(
              `${synthetic ? '' : `id: ${event.seq}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
            );
          }
          if (stop.aborted) return;
          const { executionStatus } = await agent.execution(id);
          write(`event: end\ndata: ${JSON.stringify({ executionStatus })}\n\n`);
        },
      });
    } finally {
      const left = (streams.get(token) ?? 1) - 1;
      if (left > 0) streams.set(token, left);
      else streams.delete(token);
    }
  });

  return app;
}

interface EventStream {
  /** Asked before every write: throws (the error the stream then ends with) once the stream may not go on. */
  check: () => void;
  /** When `check` starts failing by itself (the token's expiry), in ms since the epoch: checked then too. */
  checkAt?: number;
  /** Between two keep-alive comments, in ms. */
  keepAliveMs: number;
  /** Writes the events; `stop` is aborted when the client goes away or `check` fails, and a write then throws. */
  produce: (write: (chunk: string) => void, stop: AbortSignal) => Promise<void>;
}

/** Longer than this, setTimeout fires at once; a keep-alive comes long before. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Streams server-sent events until `produce` returns, fails, a check fails, or the client goes
 * away. Whatever ended it, other than the client leaving, is told in a last `error` event with its
 * status (`{ "error", "status" }`).
 */
async function streamEvents(reply: FastifyReply, stream: EventStream): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();
  class Gone extends Error {}
  const stop = new AbortController();
  raw.on('close', () => stop.abort(new Gone()));
  const write = (chunk: string) => {
    if (stop.signal.aborted) throw stop.signal.reason;
    if (raw.destroyed) throw new Gone();
    try {
      stream.check();
    } catch (error) {
      stop.abort(error);
      throw error;
    }
    raw.write(chunk);
  };
  // A failed keep-alive has aborted `stop` with its reason, which ends `produce`.
  const keepAlive = () => {
    try {
      write(': keep-alive\n\n');
    } catch {
      // `stop` says why.
    }
  };
  const timers = [setInterval(keepAlive, stream.keepAliveMs)];
  const untilCheck = stream.checkAt === undefined ? undefined : stream.checkAt - Date.now() + 1;
  if (untilCheck !== undefined && untilCheck <= MAX_TIMER_MS)
    timers.push(setTimeout(keepAlive, Math.max(0, untilCheck)));
  let ended: unknown;
  try {
    write(': stream open\n\n');
    await stream.produce(write, stop.signal);
  } catch (error) {
    ended = error;
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
  const reason: unknown = stop.signal.aborted ? stop.signal.reason : ended;
  if (reason !== undefined && !(reason instanceof Gone) && !raw.destroyed) {
    const [status, message] = statusOf(reason as Error);
    raw.write(`event: error\ndata: ${JSON.stringify({ error: message, status })}\n\n`);
  }
  if (!raw.destroyed) raw.end();
}

/** The body as `schema` takes it, or 400 naming each problem (`invalid body: unknown key "options.execSecurty"`). */
function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput('body', parsed.error);
  return parsed.data;
}

/** An error's HTTP status, by its class: the client library's errors say what went wrong. */
function statusOf(error: Error & { statusCode?: number }): [number, string] {
  if (error instanceof GatewayAuthError) return [error.status, error.message];
  if (error instanceof BadRequest || error instanceof InvalidInputError) return [400, error.message];
  if (error instanceof TooManyRequests) return [429, error.message];
  if (error instanceof ConversationNotFoundError) return [404, error.message];
  if (
    error instanceof ConversationEndedError ||
    error instanceof ConversationExistsError ||
    error instanceof UpdateRefusedError
  )
    return [409, error.message];
  // Fastify's own (a body that is not JSON, too large, …).
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
    return [error.statusCode, error.message];
  return [500, error.message];
}
