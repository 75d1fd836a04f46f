import type { FastifyInstance } from 'fastify';
import type { AgentClient } from '../../client/agent-client';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayToken } from '../gateway-api';
import type { GatewayDeps } from '../gateway-deps';
import { BadRequest } from '../gateway-errors';
import { idOf } from '../gateway-request';
import { streamEvents } from '../event-stream';

/**
 * Events as server-sent events. The token is checked again before every write (events and
 * keep-alives) and when it expires: a token that expires or is revoked ends its streams with an
 * `error` event. A token has at most `maxStreamsPerToken` streams open; the next is 429.
 */
export function registerEventRoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  access: GatewayAccess,
  openStream: (token: GatewayToken) => () => void,
) {
  const { agent } = deps;

  app.get('/v1/conversations/:id/events', async (request, reply) => {
    const id = idOf(request);
    const token = await access.allowed(request, 'events', id);
    const resumeFrom = request.headers['last-event-id'] ?? (request.query as { after?: string }).after ?? '0';
    const after = Number(resumeFrom);
    if (!Number.isInteger(after) || after < 0)
      throw new BadRequest(`not an event sequence number: ${JSON.stringify(resumeFrom)}`);
    const close = openStream(token);
    try {
      await agent.execution(id);
      await streamEvents(reply, {
        check: () => deps.tokens.recheck(token),
        ...(token.expiresAt !== undefined ? { checkAt: Date.parse(token.expiresAt) } : {}),
        keepAliveMs: deps.keepAliveMs ?? 15_000,
        produce: (write, stop) =>
          writeEvents(agent, id, { afterSeq: after, stop, pollMs: deps.eventPollMs }, write),
      });
    } finally {
      close();
    }
  });
}

/** The conversation's events after `afterSeq` as SSE frames until it ends (then an `end` event) or `stop`. */
async function writeEvents(
  agent: AgentClient,
  id: string,
  { afterSeq, stop, pollMs }: { afterSeq: number; stop: AbortSignal; pollMs: number | undefined },
  write: (chunk: string) => void,
): Promise<void> {
  // Workflow events carry their sequence number as the SSE id, so a client resumes from the
  // last one; model text and tool progress, made by watching and never kept, carry none.
  for await (const event of agent.watch(id, { afterSeq, signal: stop, ...(pollMs ? { pollMs } : {}) })) {
    const synthetic =
      event.type === 'model_text' || event.type === 'tool_execution_update' || event.type === 'model_retry';
    write(`${synthetic ? '' : `id: ${event.seq}\n`}event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }
  if (stop.aborted) return;
  const { executionStatus } = await agent.execution(id);
  write(`event: end\ndata: ${JSON.stringify({ executionStatus })}\n\n`);
}
