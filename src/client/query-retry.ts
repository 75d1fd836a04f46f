import { ServiceError, type WorkflowHandle } from '@temporalio/client';

/**
 * A query asked again while it fails for want of a worker to answer it: the worker that had the
 * conversation cached is gone (killed, or an exiting `run`) and the server is still waiting on it;
 * once it stops waiting, another worker answers. Retries start a quarter second apart, doubling to
 * two seconds, and stop `withinMs` after the first try; other failures are thrown at once.
 */
export async function queryRetried<T>(
  query: () => Promise<T>,
  { withinMs, signal }: { withinMs: number; signal?: AbortSignal | undefined },
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await query();
    } catch (error) {
      const pause = Math.min(250 * 2 ** attempt, 2_000);
      if (signal?.aborted || !(error instanceof ServiceError) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * A query asked again for as long as it fails for want of a worker and the conversation still
 * runs: what a watch needs, since it follows a conversation as long as it is alive (as it waits for
 * events when no worker runs at all). Other failures are thrown, and so is this one once the
 * conversation has ended and a further round of tries failed too.
 */
export async function queryWhileRunning<T>(
  handle: WorkflowHandle,
  query: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const rpc = <R>(call: () => Promise<R>) => (signal ? handle.client.withAbortSignal(signal, call) : call());
  // A conversation that ended meanwhile still answers once a worker replays it: one more round.
  let roundsAfterEnd = 1;
  for (;;) {
    try {
      return await queryRetried(() => rpc(query), { withinMs: WATCH_QUERY_RETRY_MS, signal });
    } catch (error) {
      if (signal?.aborted || !(error instanceof ServiceError)) throw error;
      const running = (await rpc(() => handle.describe())).status.name === 'RUNNING';
      if (!running && roundsAfterEnd-- <= 0) throw error;
    }
  }
}

/** How long a watch keeps asking for a conversation's events after its worker died. */
export const WATCH_QUERY_RETRY_MS = 30_000;
/** How long a single read (status, state, approvals) keeps asking. */
export const READ_QUERY_RETRY_MS = 10_000;
