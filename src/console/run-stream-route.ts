import { DEFAULT_MAX_STREAMS_PER_TOKEN } from '../gateway/gateway-deps';
import { streamEvents } from '../gateway/event-stream';
import { streamCounter } from '../gateway/stream-counter';
import type { AgentEvent } from '../shared/events';
import { modelRetryWords } from '../client/event-line';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import { type ConsoleKit, idOf, signedIn } from './console-kit';
import { sessionCookieOf } from './console-security';

/**
 * The run in progress on a conversation's page, as server-sent events its script shows as they
 * come: `text` (the model's text as it streams: `{ call, offset, text }`), `progress` (a tool's
 * progress: `{ toolName, text }`) and `changed` (`{ type }`: something the conversation keeps
 * happened, so the page reads its region again now rather than at its next tick). Nothing else of
 * an event is sent: the page renders kept things itself, escaped. The stream ends with the
 * session (an `error` event with status 401): at once when it expires or its token goes, within a
 * keep-alive when it is signed out on any replica; an ended conversation has none (204, which
 * tells the browser not to ask again).
 */
export function registerRunStreamRoute(kit: ConsoleKit): void {
  const openStream = streamCounter(kit.deps.maxStreamsPerToken ?? DEFAULT_MAX_STREAMS_PER_TOKEN);

  kit.routes.get('/console/live/conversations/:id/run', async (request, reply) => {
    const who = await signedIn(kit, request);
    const id = idOf(request);
    await kit.access.authorizeOn(who.token, 'status', id);
    if ((await kit.deps.agent.execution(id)).executionStatus !== 'RUNNING') return reply.status(204).send();
    const close = openStream(who.token);
    const keepAliveMs = kit.deps.keepAliveMs ?? 15_000;
    /** Set once a look at the session (asked with each keep-alive) finds it signed out on some replica. */
    let signedOut: unknown;
    try {
      await streamEvents(reply, {
        check: () => {
          if (signedOut !== undefined) throw signedOut;
          kit.sessions.recheck(who);
        },
        checkAt: who.session.expiresAt,
        keepAliveMs,
        produce: async (write, stop) => {
          const looks = setInterval(() => {
            kit.sessions.lookup(sessionCookieOf(request)).catch((error: unknown) => {
              if (!(error instanceof GatewayAuthError)) return;
              signedOut = error;
              // The next write fails its check, which ends the stream with 401 now.
              try {
                write(': session checked\n\n');
              } catch {
                // The stream has ended.
              }
            });
          }, keepAliveMs);
          try {
            const watching = kit.deps.agent.watch(id, {
              signal: stop,
              ...(kit.deps.eventPollMs ? { pollMs: kit.deps.eventPollMs } : {}),
            });
            for await (const event of watching) write(runStreamFrame(event));
          } finally {
            clearInterval(looks);
          }
        },
      });
    } finally {
      close();
    }
  });
}

/** The one SSE frame the page is sent for an event. */
export function runStreamFrame(event: AgentEvent): string {
  const frame = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
  switch (event.type) {
    case 'model_text':
      return frame('text', { call: event.call, offset: event.offset, text: event.text });
    case 'tool_execution_update':
      return frame('progress', { toolName: event.toolName, text: event.text ?? '' });
    case 'model_retry':
      return frame('progress', { toolName: 'model', text: modelRetryWords(event) });
    default:
      return frame('changed', { type: event.type });
  }
}
