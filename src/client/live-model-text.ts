/** Text a model call received, from `offset` on in that call's text. */
export interface ModelTextDelta {
  /** The conversation the call is of. */
  conversationId: string;
  /** One attempt of one model activity: `runId/activityId#attempt`, as watchers also make it from describe(). */
  call: string;
  /** Where `text` starts in the call's text, in characters. */
  offset: number;
  /** The new text. */
  text: string;
}

/** Hears each piece of model text as it arrives. */
export type ModelTextListener = (delta: ModelTextDelta) => void;

/** Where watchers hear model text from. */
export interface ModelTextSource {
  /** Calls `listener` with every delta of the conversation until the returned function is called. */
  subscribe(conversationId: string, listener: ModelTextListener): () => void;
}

/**
 * Model text handed from the model activities of a worker to the watchers in the same process as
 * it arrives, so they need not wait for a heartbeat to reach the server and come back. Nothing is
 * kept: a watcher sees what arrives while it listens, and heartbeats fill in the rest.
 */
export class LiveModelText implements ModelTextSource {
  private readonly listeners = new Map<string, Set<ModelTextListener>>();

  publish(delta: ModelTextDelta): void {
    for (const listener of this.listeners.get(delta.conversationId) ?? []) listener(delta);
  }

  /** Calls `listener` with every delta of the conversation until the returned function is called. */
  subscribe(conversationId: string, listener: ModelTextListener): () => void {
    const set = this.listeners.get(conversationId) ?? new Set<ModelTextListener>();
    set.add(listener);
    this.listeners.set(conversationId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(conversationId) === set) this.listeners.delete(conversationId);
    };
  }
}

/**
 * Starts listening to one conversation now and keeps what arrives until someone subscribes (then
 * hands it over first): a watcher that must look something up before it polls misses nothing.
 */
export function listenEarly(
  source: ModelTextSource,
  conversationId: string,
): ModelTextSource & { close(): void } {
  let buffered: ModelTextDelta[] | undefined = [];
  let forward: ModelTextListener | undefined;
  const close = source.subscribe(conversationId, (delta) =>
    forward ? forward(delta) : buffered?.push(delta),
  );
  return {
    subscribe(id, listener) {
      if (id !== conversationId) throw new Error(`listening to ${conversationId}, not ${id}`);
      for (const delta of buffered ?? []) listener(delta);
      buffered = undefined;
      forward = listener;
      return close;
    },
    close,
  };
}

/** The one every worker and client of this process share unless given another. */
export const processLiveModelText = new LiveModelText();

/** The key of one attempt of one model activity, the same whether made by the worker or a watcher. */
export function modelCallKey(runId: string, activityId: string, attempt: number): string {
  return `${runId}/${activityId}#${attempt}`;
}
