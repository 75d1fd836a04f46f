import { randomUUID } from 'node:crypto';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { measureRun } from './support/history';
import type { ConversationOptionsInput } from '../src/shared/conversation-options';
import { type Stack, bareStack, durableStack, peerStack } from './support/stacks';
import { type Summary, round, summarize, table } from './support/stats';

/** A conversation option that continues as new sooner, so less is replayed: about 11 turns a run. */
const SHORT_RUN_EVENTS = 250;

/** Growing the peer's conversations slows as its history grows; a stack stops growing here. */
const GROW_LIMIT_SECONDS = 150;

export interface UncachedCheckpoint {
  turns: number;
  /** Events of the run a worker must replay to take the next message (continue-as-new starts a new one). */
  eventsInRun: number;
  /** Message sent to the model request of its turn arriving, with no worker holding the conversation. */
  uncachedMs: Summary;
  /** The same right after, the conversation now in the worker's cache. */
  cachedMs: Summary;
}

export interface UncachedResponseResult {
  conversations: number;
  stacks: Record<string, { checkpoints: UncachedCheckpoint[]; stoppedEarly?: string }>;
  table: string;
}

/** Sends turn `turn`'s message and resolves with the time until the model server sees its first request. */
async function toFirstModelRequest(context: BenchContext, conversation: DrivenConversation): Promise<number> {
  let sentAt = 0;
  let turn = 0;
  const requested = new Promise<number>((resolve) => {
    context.model.onRequest = (seen) => {
      if (seen.c === conversation.id && seen.t === turn) resolve(preciseNow());
    };
  });
  try {
    sentAt = preciseNow();
    turn = await conversation.send({ tool: 'noop' });
    const at = await Promise.race([
      requested,
      new Promise<never>((_resolve, reject) =>
        setTimeout(
          () => reject(new Error(`no model request for ${conversation.id} in 120 s`)),
          120_000,
        ).unref(),
      ),
    ]);
    await conversation.finished(turn);
    return at - sentAt;
  } finally {
    context.model.onRequest = undefined;
  }
}

async function measureStack(
  context: BenchContext,
  stack: Stack,
  checkpoints: number[],
  conversations: number,
  label: string,
  options?: ConversationOptionsInput,
): Promise<{ checkpoints: UncachedCheckpoint[]; stoppedEarly?: string }> {
  const taskQueue = `bench-uncached-${stack.name}-${randomUUID()}`;
  let worker = await stack.startWorker(taskQueue);
  const began = Date.now();
  const measured: UncachedCheckpoint[] = [];
  let stoppedEarly: string | undefined;
  try {
    const driven = await Promise.all(
      Array.from({ length: conversations }, (_, i) =>
        DrivenConversation.start(
          context,
          stack,
          `uncached-${stack.name}-${i}-${randomUUID()}`,
          taskQueue,
          options,
        ),
      ),
    );
    for (const checkpoint of checkpoints) {
      // Turns of several conversations at once; each conversation one turn after another.
      await Promise.all(
        driven.map(async (conversation) => {
          while (conversation.turns < checkpoint && !stoppedEarly) {
            if (Date.now() - began > GROW_LIMIT_SECONDS * 1_000) {
              stoppedEarly = `growing stopped at ${conversation.turns} turns (time limit of ${GROW_LIMIT_SECONDS} s)`;
              break;
            }
            await conversation.runTurn();
          }
        }),
      );
      if (stoppedEarly) break;
      // A new worker process: nothing cached, as after a deploy or a restart.
      await worker.stop();
      worker = await stack.startWorker(taskQueue);
      const first = driven[0]!;
      const { events } = await measureRun(stack.client, first.id, first.runIds.at(-1)!);
      const uncached: number[] = [];
      for (const conversation of driven) uncached.push(await toFirstModelRequest(context, conversation));
      const cached: number[] = [];
      for (const conversation of driven) cached.push(await toFirstModelRequest(context, conversation));
      measured.push({
        turns: checkpoint,
        eventsInRun: events,
        uncachedMs: summarize(uncached),
        cachedMs: summarize(cached),
      });
      context.log(
        `  ${label}, ${checkpoint} turns: uncached ${uncached.map((ms) => round(ms, 0)).join(', ')} ms; ` +
          `cached ${cached.map((ms) => round(ms, 0)).join(', ')} ms`,
      );
    }
  } finally {
    await worker.stop();
  }
  return { checkpoints: measured, ...(stoppedEarly ? { stoppedEarly } : {}) };
}

/**
 * Bench 9: a message to a long conversation that no worker holds in its cache (the worker was
 * restarted, or the conversation was evicted): the worker must replay the conversation's run before
 * the turn's model call can be scheduled. Conversations grow to the checkpoint, the worker process is
 * replaced by a fresh one, and each conversation is sent one message: the time is taken from the
 * message sent to its model request reaching the model server. The same again right after, now
 * cached, shows what the replay adds. durable-agent continues as new at the server's suggestion
 * (4 Ki events, about 185 turns), so it is also measured at 180 turns, its longest run, and with
 * `maxHistoryEvents` set low, which bounds what is replayed at the price of more continue-as-new.
 */
export async function uncachedResponse(context: BenchContext): Promise<UncachedResponseResult> {
  const conversations = context.quick ? 2 : 4;
  const turns = context.quick ? 50 : 200;
  const durable = durableStack(context);
  const plan: Array<{
    label: string;
    stack: Stack;
    checkpoints: number[];
    options?: ConversationOptionsInput;
  }> = [
    { label: durable.name, stack: durable, checkpoints: context.quick ? [turns] : [180, turns] },
    {
      label: `${durable.name}, maxHistoryEvents ${SHORT_RUN_EVENTS}`,
      stack: durable,
      checkpoints: [turns],
      options: { maxHistoryEvents: SHORT_RUN_EVENTS },
    },
    { label: 'ai-sdk-peer', stack: peerStack(context), checkpoints: [turns] },
    { label: 'temporal-bare', stack: bareStack(context), checkpoints: [turns] },
  ];
  const result: UncachedResponseResult = { conversations, stacks: {}, table: '' };
  for (const { label, stack, checkpoints, options } of plan) {
    result.stacks[label] = await measureStack(context, stack, checkpoints, conversations, label, options);
  }
  const rows = Object.entries(result.stacks).flatMap(([name, entry]) =>
    entry.checkpoints.map((point) => [
      name,
      point.turns,
      point.eventsInRun,
      point.uncachedMs.median,
      point.uncachedMs.max,
      point.cachedMs.median,
      round(point.uncachedMs.median - point.cachedMs.median),
    ]),
  );
  const stopped = Object.entries(result.stacks).flatMap(([name, entry]) =>
    entry.stoppedEarly ? [`${name}: ${entry.stoppedEarly}.`] : [],
  );
  result.table = [
    table(
      [
        `message -> its model request (${conversations} conversations)`,
        'turns before',
        'events in the run replayed',
        'uncached median ms',
        'uncached max ms',
        'cached median ms',
        'replay adds ms',
      ],
      rows,
    ),
    ...stopped,
  ].join('\n\n');
  return result;
}
