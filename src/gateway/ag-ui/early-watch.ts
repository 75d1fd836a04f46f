import type { AgentClient } from '../../client/agent-client';
import type { AgentEvent } from '../../shared/events';

/** Events a watch holds for a stream that has not begun to read them; past this, it stops. */
const MAX_HELD_EVENTS = 10_000;

/**
 * A watch on a conversation opened before a run input is delivered, and read from then on into a
 * queue: it listens for the text model calls stream (in this process, or from their worker's push
 * endpoint) from the start of the run the input starts, while the input is still being delivered.
 * Events it yields that the page has seen are passed over by the translation.
 */
export class EarlyWatch {
  private readonly abort = new AbortController();
  private readonly held: AgentEvent[] = [];
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;

  constructor(agent: AgentClient, conversationId: string, afterSeq: number, pollMs: number | undefined) {
    const events = agent.watch(conversationId, {
      afterSeq,
      signal: this.abort.signal,
      ...(pollMs ? { pollMs } : {}),
    });
    void this.read(events);
  }

  private async read(events: AsyncGenerator<AgentEvent, void>): Promise<void> {
    try {
      for await (const event of events) {
        if (this.held.length >= MAX_HELD_EVENTS) throw new Error('the page read too slowly: reconnect');
        this.held.push(event);
        this.wake?.();
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.ended = true;
      this.wake?.();
    }
  }

  /** The watched events until `stop`, the conversation's end, or the caller stops iterating. */
  async *follow(stop: AbortSignal): AsyncGenerator<AgentEvent, void> {
    const onStop = () => this.close();
    stop.addEventListener('abort', onStop);
    try {
      for (;;) {
        const event = this.held.shift();
        if (event) {
          yield event;
          continue;
        }
        if (this.ended) {
          if (this.failure !== undefined && !stop.aborted) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      stop.removeEventListener('abort', onStop);
    }
  }

  /** Stops watching (the route calls it whatever happened). */
  close(): void {
    this.abort.abort();
  }
}
