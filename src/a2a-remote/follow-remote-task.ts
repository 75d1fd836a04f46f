import { setTimeout as delay } from 'node:timers/promises';
import { type RemoteAgentClient, RemoteUnreachableError } from './remote-agent-client';
import {
  FINAL_STATES,
  type RemoteTask,
  type RemoteTaskState,
  WAITING_STATES,
  statusMark,
} from './remote-task';

/** Polls start quick (most tasks end in a second or two) and slow down to one every two seconds. */
const POLL_DELAYS_MS = [200, 300, 500, 1_000, 2_000];

/** The remote task did not end or ask for input within the time it was given. */
export class RemoteTaskTimeoutError extends Error {
  constructor(
    readonly taskId: string,
    readonly state: RemoteTaskState,
  ) {
    super(`the remote task ${taskId} was still ${state} when the time for it ran out`);
    this.name = 'RemoteTaskTimeoutError';
  }
}

/**
 * Follows a remote task by polling GetTask (every A2A agent answers it, whatever it streams or
 * pushes) until it ends or waits for its caller, or `deadline` (ms since the epoch) passes. A poll
 * that does not reach the remote is tried again; an answer that refuses ends the following.
 * `onState` hears each new state; `task` is where the task stood when following began. A waiting
 * status whose mark is `answered` is the question this call answers, not a new one: following goes on.
 */
export async function followRemoteTask(
  client: RemoteAgentClient,
  task: RemoteTask,
  options: {
    deadline: number;
    signal: AbortSignal;
    answered?: string;
    onState?: (task: RemoteTask) => void;
  },
): Promise<RemoteTask> {
  const settled = (at: RemoteTask) =>
    FINAL_STATES.has(at.status.state) ||
    (WAITING_STATES.has(at.status.state) && statusMark(at) !== options.answered);
  let current = task;
  options.onState?.(current);
  for (let poll = 0; !settled(current); poll++) {
    const wait = POLL_DELAYS_MS[Math.min(poll, POLL_DELAYS_MS.length - 1)]!;
    if (Date.now() + wait > options.deadline)
      throw new RemoteTaskTimeoutError(current.id, current.status.state);
    await delay(wait, undefined, { signal: options.signal });
    let next: RemoteTask;
    try {
      next = await client.getTask(current.id, options.signal);
    } catch (error) {
      // A network that fails for a while does not end the task: it is asked again until the deadline.
      if (error instanceof RemoteUnreachableError && !options.signal.aborted) continue;
      throw error;
    }
    if (next.id !== current.id) throw new Error(`GetTask ${current.id} answered with another task`);
    if (statusMark(next) !== statusMark(current)) options.onState?.(next);
    current = next;
  }
  return current;
}
