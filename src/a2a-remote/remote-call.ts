import { setTimeout as delay } from 'node:timers/promises';
import { type RemoteAgentClient, RemoteUnreachableError } from './remote-agent-client';
import { followRemoteTask } from './follow-remote-task';
import { type RemotePart, type RemoteTask, type RemoteTaskState, statusMark } from './remote-task';

/** Where a call stands, as its heartbeats carry it: enough for the next attempt to go on from there. */
export interface RemoteCallProgress {
  taskId: string;
  state: RemoteTaskState;
  /** The mark of the waiting status this call answers (a call that continues a task). */
  answered?: string;
}

/** One message to a remote agent: a new task's first, or the answer to a task that waits (`taskId`). */
export interface RemoteCallRequest {
  messageId: string;
  text: string;
  taskId?: string;
}

export type RemoteCallOutcome = { kind: 'message'; parts: RemotePart[] } | { kind: 'task'; task: RemoteTask };

/**
 * Sends one message and follows the task it concerns until the task ends or waits for its caller.
 * `resume` is where an earlier attempt of the same call stood: then the task is followed, and the
 * message is not sent again, unless it answers a question the task still asks unchanged (so the
 * earlier attempt died before its answer arrived). Without `resume` the message goes out under
 * `messageId`, the same for every attempt. `onProgress` hears the task's id as soon as it is known,
 * before any wait.
 */
export async function callRemoteAgent(
  client: RemoteAgentClient,
  request: RemoteCallRequest,
  options: {
    resume?: RemoteCallProgress;
    deadline: number;
    signal: AbortSignal;
    onProgress: (progress: RemoteCallProgress, task: RemoteTask) => void;
  },
): Promise<RemoteCallOutcome> {
  const { signal } = options;
  let answered = options.resume?.answered;
  let task: RemoteTask | undefined;
  if (options.resume) {
    task = await reachedOnce(() => client.getTask(options.resume!.taskId, signal), options);
    if (answered !== undefined && statusMark(task) === answered) task = undefined;
  } else if (request.taskId !== undefined) {
    const waiting = await client.getTask(request.taskId, signal);
    answered = statusMark(waiting);
    options.onProgress({ taskId: waiting.id, state: waiting.status.state, answered }, waiting);
  }
  if (task === undefined) {
    const sent = await client.send(request, signal);
    if ('message' in sent) return { kind: 'message', parts: sent.message.parts };
    task = sent.task;
  }
  const settled = await followRemoteTask(client, task, {
    deadline: options.deadline,
    signal,
    ...(answered !== undefined ? { answered } : {}),
    onState: (at) =>
      options.onProgress(
        { taskId: at.id, state: at.status.state, ...(answered !== undefined ? { answered } : {}) },
        at,
      ),
  });
  return { kind: 'task', task: settled };
}

/** How long a resumed call waits between tries while the remote cannot be reached. */
const UNREACHABLE_RETRY_MS = 1_000;

/**
 * `read`, tried again while the remote cannot be reached, until the deadline: the worker that died
 * may have lost its network, not the remote its task.
 */
async function reachedOnce<T>(
  read: () => Promise<T>,
  options: { deadline: number; signal: AbortSignal },
): Promise<T> {
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof RemoteUnreachableError) || Date.now() + UNREACHABLE_RETRY_MS > options.deadline)
        throw error;
    }
    await delay(UNREACHABLE_RETRY_MS, undefined, { signal: options.signal });
  }
}
