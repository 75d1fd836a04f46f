import type { AgentClient } from '../../client/agent-client';
import type { AgentEvent } from '../../shared/events';

/**
 * A watch on a conversation opened before a run input is delivered: it listens for the text model
 * calls of this process stream from then on, so the first tokens of the run the input starts are
 * not missed. Events it yields that the page has seen are passed over by the translation.
 */
export class EarlyWatch {
  private readonly abort = new AbortController();
  private readonly events: AsyncGenerator<AgentEvent, void>;
  private readonly first: Promise<IteratorResult<AgentEvent, void>>;

  constructor(agent: AgentClient, conversationId: string, afterSeq: number, pollMs: number | undefined) {
    this.events = agent.watch(conversationId, {
      afterSeq,
      signal: this.abort.signal,
      ...(pollMs ? { pollMs } : {}),
    });
    // The generator starts (and listens) at its first step; its outcome is awaited by `follow`.
    this.first = this.events.next();
    this.first.catch(() => undefined);
  }

  /** The watched events until `stop`, the conversation's end, or the caller stops iterating. */
  async *follow(stop: AbortSignal): AsyncGenerator<AgentEvent, void> {
    const onStop = () => this.abort.abort();
    stop.addEventListener('abort', onStop);
    try {
      const first = await this.first;
      if (first.done) return;
      yield first.value;
      yield* this.events;
    } finally {
      stop.removeEventListener('abort', onStop);
    }
  }

  /** Stops watching (the route calls it whatever happened). */
  close(): void {
    this.abort.abort();
    void this.events.return(undefined).catch(() => undefined);
  }
}
