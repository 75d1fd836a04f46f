/**
 * The chaos run's messages go through the gateway as a service sends them: a POST with an
 * Idempotency-Key, tried again while it fails, when its answer is lost on the way back (the message
 * was sent), or when it takes longer than the service waits (it may have been sent, or not yet).
 * The conversation takes each message once however often it is delivered; the trials check that.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { AgentClient } from '../src/client/agent-client';
import type { RunToFollow } from '../src/client/conversation-follow';
import { createGateway } from '../src/http/gateway-app';
import { GatewayTokens } from '../src/gateway/gateway-tokens';

/** What the trials' sends through the gateway did. */
export interface GatewayTally {
  /** Requests tried again after a failure or a timeout. */
  retries: number;
  /** Answers the gateway marked as a replay of a message taken before. */
  replays: number;
}

export interface ChaosGateway {
  /** Sends a message (the first one starts the conversation with `options`); returns where to follow its run. */
  send(id: string, text: string, options?: Record<string, unknown>): Promise<RunToFollow>;
  tally: GatewayTally;
  close(): Promise<void>;
}

/** How long a send keeps trying. */
const SEND_WITHIN_MS = 90_000;

export async function startChaosGateway(agent: AgentClient, random: () => number): Promise<ChaosGateway> {
  const token = `tok-chaos-${randomUUID()}`;
  const app: FastifyInstance = createGateway({
    agent,
    tokens: new GatewayTokens([
      { name: 'chaos', sha256: createHash('sha256').update(token).digest('hex'), actions: ['*'] },
    ]),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const tally: GatewayTally = { retries: 0, replays: 0 };

  let sends = 0;
  const post = async (path: string, body: unknown, key: string) => {
    const deadline = Date.now() + SEND_WITHIN_MS;
    // Of every three sends, one loses the gateway's answer to its first try (the message was sent),
    // and one gives up on its first try sooner than a send takes (it may have been sent, or not yet).
    const fault = (['answer_lost', 'impatient', 'none'] as const)[sends++ % 3];
    for (let attempt = 1; ; attempt++) {
      const waitMs = attempt === 1 && fault === 'impatient' ? 20 + random() * 100 : 10_000;
      try {
        const response = await fetch(`${url}${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': key,
          },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(waitMs),
        });
        const answer = (await response.json()) as Record<string, unknown>;
        if (response.ok && !(attempt === 1 && fault === 'answer_lost')) {
          if (response.headers.get('idempotent-replayed') === 'true') tally.replays++;
          return answer as { conversationId: string; messageId: string; afterSeq: number };
        }
        // A refusal is final; the gateway failing (its Temporal server down) is tried again.
        if (!response.ok && response.status < 500) {
          throw new Error(`the gateway refused ${path}: ${JSON.stringify(answer)}`);
        }
      } catch (error) {
        if ((error as Error).message.startsWith('the gateway refused') || Date.now() > deadline) throw error;
      }
      tally.retries++;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * attempt, 2_000)));
    }
  };

  return {
    tally,
    send: async (id, text, options) => {
      const key = randomUUID();
      const sent = options
        ? await post('/v1/conversations', { id, options, text }, key)
        : await post(`/v1/conversations/${id}/messages`, { text }, key);
      return { conversationId: id, messageId: sent.messageId, afterSeq: sent.afterSeq };
    },
    close: () => app.close(),
  };
}
