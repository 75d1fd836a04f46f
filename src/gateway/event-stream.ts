import type { FastifyReply } from 'fastify';
import { statusOf } from './gateway-errors';

/** One stream of server-sent events: what it writes, and what may end it. */
export interface EventStream {
  /** Asked before every write: throws (the error the stream then ends with) once the stream may not go on. */
  check: () => void;
  /** When `check` starts failing by itself (the token's expiry), in ms since the epoch: checked then too. */
  checkAt?: number;
  /** Between two keep-alive comments, in ms. */
  keepAliveMs: number;
  /** Writes the events; `stop` is aborted when the client goes away or `check` fails, and a write then throws. */
  produce: (write: (chunk: string) => void, stop: AbortSignal) => Promise<void>;
  /** The last frame told when something other than the client ended the stream; an `error` event by default. */
  errorFrame?: (status: number, message: string) => string;
}

/** Longer than this, setTimeout fires at once; a keep-alive comes long before. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Streams server-sent events until `produce` returns, fails, a check fails, or the client goes
 * away. Whatever ended it, other than the client leaving, is told in a last `error` event with its
 * status (`{ "error", "status" }`).
 */
export async function streamEvents(reply: FastifyReply, stream: EventStream): Promise<void> {
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
    raw.write(
      stream.errorFrame?.(status, message) ??
        `event: error\ndata: ${JSON.stringify({ error: message, status })}\n\n`,
    );
  }
  if (!raw.destroyed) raw.end();
}
