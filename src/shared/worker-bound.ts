/**
 * Things that live in one worker process (background processes) have ids ending in `-TAG`, TAG being
 * that worker's eight hex digits. Besides the conversation's task queue, the worker polls a queue of
 * its own for TAG, and a call naming such an id is scheduled there: it reaches the worker that holds
 * the thing, whichever worker of the task queue the conversation's other calls land on.
 */
const WORKER_TAG = /-([0-9a-f]{8})$/;

export const WORKER_TAG_LENGTH = 8;

/** The task queue only the worker holding TAG's things polls. */
export function workerBoundTaskQueue(taskQueue: string, tag: string): string {
  return `${taskQueue}@worker-${tag}`;
}

/** TAG of an id such as `p3-1a2b3c4d`, or undefined when the value is no such id. */
export function workerTagOf(id: unknown): string | undefined {
  return typeof id === 'string' ? WORKER_TAG.exec(id)?.[1] : undefined;
}

/**
 * How long a call waits for the holding worker to take it. That worker's own queue carries only such
 * calls, so a wait this long means the worker is gone (stopped, restarted or killed).
 */
export const WORKER_BOUND_START_TIMEOUT_MS = 10_000;
