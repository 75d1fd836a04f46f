import {
  ServiceError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
  isGrpcServiceError,
} from '@temporalio/client';
import { abortableCall } from './abortable-call';

/**
 * A query asked again while it fails for want of a worker to answer it: the worker that had the
 * conversation cached is gone (killed, or an exiting `run`) and the server is still waiting on it;
 * once it stops waiting, another worker answers. Retries are at most half a second apart and stop
 * `withinMs` after the first try; other failures are thrown at once.
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
      const pause = retryPause(attempt);
      if (signal?.aborted || !(error instanceof ServiceError) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/**
 * Thrown when a conversation has ended and no worker answers queries for it any more (none serves its
 * task queue): its events cannot be read now. A watch ends there; a follower reads the workflow's result.
 */
export class EndedUnansweredError extends Error {
  constructor(
    readonly conversationId: string,
    cause: unknown,
  ) {
    super(`conversation ${conversationId} has ended and no worker answers for it`, { cause });
    this.name = 'EndedUnansweredError';
  }
}

export interface WhileRunningOptions {
  /** Stops asking at once; a call in flight is cancelled too. */
  signal?: AbortSignal | undefined;
  /**
   * How long to go on asking once the conversation is seen to have ended (a worker that replays it
   * still answers), in ms; then EndedUnansweredError. Default WATCH_QUERY_RETRY_MS.
   */
  afterEndMs?: number | undefined;
}

/**
 * A query asked again for as long as it fails for want of a worker and the conversation still
 * runs: what a watch needs, since it follows a conversation as long as it is alive (as it waits for
 * events when no worker runs at all). After each failure the conversation is looked at (describe,
 * answered without a worker); once it has ended, asking goes on for `afterEndMs` more. A server
 * that answers neither is waited for WATCH_QUERY_RETRY_MS; other failures are thrown at once.
 */
export async function queryWhileRunning<T>(
  handle: WorkflowHandle,
  query: () => Promise<T>,
  { signal, afterEndMs = WATCH_QUERY_RETRY_MS }: WhileRunningOptions = {},
): Promise<T> {
  const rpc = <R>(call: () => Promise<R>) => abortableCall(handle, signal, call);
  const serviceFailed = (error: unknown) => !signal?.aborted && error instanceof ServiceError;
  let endedSince: number | undefined;
  let unreachableSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await rpc(query);
    } catch (error) {
      if (!serviceFailed(error)) throw error;
      // Undefined while the server itself does not answer (restarting): asked again for a while.
      const status = await rpc(() => handle.describe()).then(
        (description) => description.status.name,
        (describeError: unknown) => {
          if (!serviceFailed(describeError)) throw describeError;
          return undefined;
        },
      );
      const now = Date.now();
      unreachableSince = status === undefined ? (unreachableSince ?? now) : undefined;
      if (unreachableSince !== undefined && now - unreachableSince >= WATCH_QUERY_RETRY_MS) throw error;
      if (status !== undefined && status !== 'RUNNING') {
        endedSince ??= now;
        if (now - endedSince >= afterEndMs) throw new EndedUnansweredError(handle.workflowId, error);
      }
      await new Promise((resolve) => setTimeout(resolve, retryPause(attempt)));
    }
  }
}

/**
 * The workflow's description, asked again while the server does not answer (a frontend restarting,
 * a connection being made again: gRPC UNAVAILABLE or DEADLINE_EXCEEDED) for up to
 * WATCH_QUERY_RETRY_MS, as a watch's queries are; other failures (no such workflow, a refusal) are
 * thrown at once. A read, so asking again changes nothing.
 */
export function describeWhileUnreachable(
  handle: WorkflowHandle,
  signal?: AbortSignal,
): Promise<WorkflowExecutionDescription> {
  return whileUnreachable(() => abortableCall(handle, signal, () => handle.describe()), {
    withinMs: WATCH_QUERY_RETRY_MS,
    signal,
  });
}

/**
 * A call made again while the server does not answer it (UNAVAILABLE or DEADLINE_EXCEEDED), for up
 * to `withinMs` from the first failure; other failures are thrown at once. Only for calls that may
 * reach the server twice: a read, or a message the conversation takes once by its id.
 */
export async function whileUnreachable<T>(
  call: () => Promise<T>,
  { withinMs, signal }: { withinMs: number; signal?: AbortSignal | undefined },
): Promise<T> {
  let unreachableSince: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (signal?.aborted || !serverUnreachable(error)) throw error;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince >= withinMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, retryPause(attempt)));
    }
  }
}

/** The server did not answer the call (as opposed to answering it with a refusal). */
function serverUnreachable(error: unknown): boolean {
  if (!(error instanceof ServiceError) || !isGrpcServiceError(error.cause)) return false;
  return error.cause.code === GRPC_UNAVAILABLE || error.cause.code === GRPC_DEADLINE_EXCEEDED;
}
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/**
 * The pause before asking again: a quarter second, then half a second. A query fails while the
 * worker that held the conversation is gone and the server still waits on it, which ends at a
 * moment nobody announces; asking every half second sees the answer soon after (at two queries and
 * two describes a second per reader, which the server answers without a worker).
 */
function retryPause(attempt: number): number {
  return Math.min(250 * attempt, QUERY_RETRY_PAUSE_MAX_MS);
}
const QUERY_RETRY_PAUSE_MAX_MS = 500;

/** How long a watch keeps asking for a conversation's events after its worker died. */
export const WATCH_QUERY_RETRY_MS = 30_000;
/** How long a single read (status, state, approvals) keeps asking. */
export const READ_QUERY_RETRY_MS = 10_000;
/**
 * How long `send` keeps asking where a running conversation stands before it sends: its worker may
 * be being replaced, and a query then waits for the server's timeout (30 s) before it fails, so a
 * read that gave up after that one try would fail a message another worker takes moments later.
 */
export const SEND_QUERY_RETRY_MS = 60_000;
/**
 * How long `send` and `steer` keep delivering a message while the server does not answer (a
 * frontend restarting or being replaced): the conversation takes a message id once, so a delivery
 * that did reach it before the failure is not taken twice.
 */
export const SEND_RETRY_MS = 60_000;
