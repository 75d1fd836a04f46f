// Following a conversation as it happens: `watch` yields its events with model text and tool
// progress made from what running calls report; `followRun` follows one run to its end.
import { statusQuery } from '../shared/conversation-api';
import { ConversationEndedError } from '../shared/conversation-errors';
import type { AgentEvent } from '../shared/events';
import type { ClientContext } from './client-context';
import { DEFAULT_POLL_MS, pollConversation } from './conversation-poller';
import { execution, failureOf } from './conversation-execution';
import { listenEarly, type ModelTextSource } from './live-model-text';
import { EndedUnansweredError, WATCH_QUERY_RETRY_MS, queryWhileRunning } from './query-retry';
import {
  EndedConversationSchema,
  type RunEnd,
  type RunSought,
  endsRun,
  learnRun,
  runEndFromResult,
} from './run-end';

/** Options of `AgentClient.watch`. */
export interface WatchOptions {
  /** Only events with a higher sequence number; the conversation's newest event when absent (only what comes next). */
  afterSeq?: number;
  /** Stops after yielding the first event for which this is true. */
  until?: (event: AgentEvent) => boolean;
  /** Between two polls, in ms (default 200). */
  pollMs?: number;
  /** Ends watching at once (a call to Temporal in flight is cancelled too). */
  signal?: AbortSignal;
}

/**
 * The run `followRun` follows to its end (see RunSought), and from where: what `send` and `steer`
 * return will do.
 */
export interface RunToFollow extends RunSought {
  /** The conversation the run is in. */
  conversationId: string;
  /** Events after this one are yielded. */
  afterSeq: number;
}

/** Options of `AgentClient.followRun`. */
export interface FollowRunOptions {
  /** Between two polls, in ms (default 200). */
  pollMs?: number;
  /** Ends following at once (it then returns `{ how: 'stopped' }`). */
  signal?: AbortSignal;
}

/**
 * Once the conversation has ended, how long a follower goes on asking for its events before it reads
 * the workflow's result instead: at once, since the result says how the last run ended.
 */
const FOLLOW_AFTER_END_MS = 0;

/** How a watch ended: `until` matched, the conversation closed (every event seen), or closed with events unread. */
type WatchEnd = 'until' | 'closed' | 'unanswered';

export function watch(
  context: ClientContext,
  conversationId: string,
  watchOptions: WatchOptions,
): AsyncGenerator<AgentEvent, void> {
  return watchEvents(context, conversationId, watchOptions, WATCH_QUERY_RETRY_MS);
}

export async function* followRun(
  context: ClientContext,
  target: RunToFollow,
  options: FollowRunOptions,
): AsyncGenerator<AgentEvent, RunEnd> {
  const { conversationId, afterSeq, messageId, run, afterRun } = target;
  let sought: RunSought = {
    ...(messageId !== undefined ? { messageId } : {}),
    ...(run !== undefined ? { run } : {}),
    ...(afterRun !== undefined ? { afterRun } : {}),
  };
  let lastSeq = afterSeq;
  const watched: { end?: WatchEnd } = {};
  const watchOptions: WatchOptions = {
    afterSeq,
    ...(options.pollMs ? { pollMs: options.pollMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  try {
    for await (const event of watchEvents(
      context,
      conversationId,
      watchOptions,
      FOLLOW_AFTER_END_MS,
      watched,
    )) {
      lastSeq = event.seq;
      sought = learnRun(sought, event);
      yield event;
      if (endsRun(event, sought)) return { how: 'finished', event, from: 'events' };
    }
  } catch (error) {
    // A call in flight when `signal` stopped following fails; Temporal takes no more queries for a closed conversation.
    if (!options.signal?.aborted && !(error instanceof ConversationEndedError)) throw error;
  }
  if (options.signal?.aborted) return { how: 'stopped' };
  return endedRun(context, conversationId, sought, lastSeq, watched.end !== 'closed');
}

/**
 * `watch`, with how it ended put in `watched`; `afterEndMs`: how long events are asked for once
 * the conversation has ended.
 */
async function* watchEvents(
  context: ClientContext,
  conversationId: string,
  watchOptions: WatchOptions,
  afterEndMs: number,
  watched: { end?: WatchEnd } = {},
): AsyncGenerator<AgentEvent, void> {
  // Listening before the first call to Temporal, so text streamed meanwhile is not missed.
  const liveText = listenEarly(context.liveText, conversationId);
  try {
    watched.end = yield* watchFrom(context, conversationId, watchOptions, liveText, afterEndMs);
  } catch (error) {
    if (!(error instanceof EndedUnansweredError)) throw error;
    watched.end = 'unanswered';
  } finally {
    liveText.close();
  }
}

async function* watchFrom(
  context: ClientContext,
  conversationId: string,
  watchOptions: WatchOptions,
  liveText: ModelTextSource,
  afterEndMs: number,
): AsyncGenerator<AgentEvent, WatchEnd> {
  const handle = context.handle(conversationId);
  const { signal } = watchOptions;
  const status = await context.explainErrors(conversationId, () =>
    queryWhileRunning(handle, () => handle.query(statusQuery), { signal, afterEndMs }),
  );
  let lastSeq = watchOptions.afterSeq ?? status.lastSeq;
  let run = status.runCount;
  const poll = pollConversation(handle, lastSeq, {
    pollMs: watchOptions.pollMs ?? DEFAULT_POLL_MS,
    liveText,
    afterEndMs,
    ...(signal ? { signal } : {}),
  });
  for await (const item of poll) {
    if (item.kind === 'event') {
      lastSeq = item.event.seq;
      run = item.event.run;
      yield item.event;
      if (watchOptions.until?.(item.event)) return 'until';
      continue;
    }
    if (item.kind === 'text') {
      const { call, offset, text, at } = item;
      yield { type: 'model_text', seq: lastSeq, at, run, call, offset, text };
      continue;
    }
    if (item.kind === 'retry') {
      const { attempt, error, givesUpAt } = item.retry;
      yield {
        type: 'model_retry',
        seq: lastSeq,
        at: Date.now(),
        run,
        attempt,
        error,
        ...(givesUpAt !== undefined ? { givesUpAt } : {}),
      };
      continue;
    }
    const { progress } = item;
    if (progress.kind !== 'tool') continue;
    yield {
      type: 'tool_execution_update',
      seq: lastSeq,
      at: item.heartbeatAt,
      run,
      toolCallId: progress.toolCallId,
      toolName: progress.toolName,
      ...(progress.text !== undefined ? { text: progress.text } : {}),
      ...(progress.details !== undefined ? { details: progress.details } : {}),
    };
  }
  return 'closed';
}

/**
 * How the run sought ended, by what Temporal holds of a conversation that has closed: its result
 * (how its last run ended) when `eventsUnread` and that run is the one sought, else why it closed.
 */
async function endedRun(
  context: ClientContext,
  conversationId: string,
  sought: RunSought,
  lastSeq: number,
  eventsUnread: boolean,
): Promise<RunEnd> {
  const ended = await execution(context, conversationId);
  const { executionStatus } = ended;
  if (executionStatus === 'RUNNING') {
    throw new Error(`following conversation ${conversationId} ended while it still runs`);
  }
  if (executionStatus === 'COMPLETED' && eventsUnread) {
    const result = EndedConversationSchema.safeParse(await context.handle(conversationId).result());
    const closedAt = ended.closeTime?.getTime() ?? Date.now();
    const event = result.success ? runEndFromResult(sought, result.data, { lastSeq, closedAt }) : undefined;
    if (event) return { how: 'finished', event, from: 'result' };
  }
  const failure = await failureOf(context, conversationId).catch(() => undefined);
  return { how: 'conversation_ended', executionStatus, ...(failure ? { failure } : {}) };
}
