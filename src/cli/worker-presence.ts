import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { livePollersOf } from '../worker/other-workers';

/**
 * Why no worker will answer a query on `taskQueue`, when the server lists no live poller there: a
 * query none takes would wait for the server's timeout. Undefined when one polls, or when the
 * server cannot say.
 */
export async function noWorkerFor(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<string | undefined> {
  const polled = await livePollersOf(client.workflowService, namespace, taskQueue).catch(() => true);
  return polled ? undefined : 'no worker polls it';
}

/** A worker the server lists as polling a task queue: who it says it is, and when it last asked for work. */
export interface ListedPoller {
  identity: string;
  /** In ms since the epoch. */
  lastPollAt: number;
}

/** The workers the server lists on `taskQueue`, the most recent first; empty when the server cannot say. */
export async function listedPollers(
  client: Client,
  namespace: string,
  taskQueue: string,
): Promise<ListedPoller[]> {
  const described = await client.workflowService
    .describeTaskQueue({
      namespace,
      taskQueue: { name: taskQueue },
      taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    })
    .catch(() => undefined);
  return (described?.pollers ?? [])
    .map((poller) => ({
      identity: poller.identity ?? '(no identity)',
      lastPollAt: Number(poller.lastAccessTime?.seconds ?? 0) * 1_000,
    }))
    .sort((a, b) => b.lastPollAt - a.lastPollAt);
}

/** Pollers named in a note, at most. */
const NAMED_POLLERS = 3;
/** How long the server waits for a worker to answer a query before it fails it, about. */
const SERVER_QUERY_TIMEOUT_S = 30;

/**
 * What to tell a person whose question to a running conversation no worker has answered for a
 * while. The server lists a worker that polled a task queue for about a minute after its last poll,
 * dead or alive (a live one polls again each minute), so a worker that died seconds ago looks like
 * one that polls: its listing cannot tell them apart, a question unanswered can.
 */
export function unansweredWords(waiting: {
  conversationId: string;
  taskQueue: string;
  waitedMs: number;
  pollers: ListedPoller[];
  nowMs: number;
}): string {
  const { conversationId, taskQueue, pollers } = waiting;
  const named = pollers
    .slice(0, NAMED_POLLERS)
    .map(
      (poller) =>
        `${poller.identity} (last poll ${Math.max(0, Math.round((waiting.nowMs - poller.lastPollAt) / 1_000))} s ago)`,
    );
  const more = pollers.length > NAMED_POLLERS ? ` and ${pollers.length - NAMED_POLLERS} more` : '';
  const listed = named.length
    ? `the server lists a worker for about a minute after its last poll, dead or alive, and lists ${named.join(', ')}${more} on task queue ${taskQueue}`
    : `the server lists no worker on task queue ${taskQueue} now`;
  return (
    `no worker has answered for conversation ${conversationId} in ${Math.round(waiting.waitedMs / 1_000)} s; still waiting. ` +
    `The worker that had it may have died: ${listed}. ` +
    `A worker started on ${taskQueue} answers (durable-agent worker); ` +
    `with none, the server gives up about ${SERVER_QUERY_TIMEOUT_S} s after the question.`
  );
}

/**
 * `answer`; when it has not come after `afterMs`, the words `note` makes are said once (not when the
 * answer comes while they are being made). `note` must not fail.
 */
export async function sayingWhenSlow<T>(
  answer: Promise<T>,
  afterMs: number,
  note: () => Promise<string>,
  say: (line: string) => void,
): Promise<T> {
  let settled = false;
  const timer = setTimeout(() => {
    void note().then((line) => {
      if (!settled) say(line);
    });
  }, afterMs);
  try {
    return await answer;
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}
