import { randomUUID } from 'node:crypto';
import { preciseNow } from './support/clock';
import { type BenchContext, CLUSTER_SUFFIX, serversToMeasure } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import type { MemoryReport } from './support/protocol';
import { type Stack, durableStack, peerStack } from './support/stacks';
import { mb, round, table } from './support/stats';

export interface ThroughputLevel {
  conversations: number;
  turnsPerConversation: number;
  /** Turns finished within the time limit (all of them unless `timedOut`). */
  turns: number;
  seconds: number;
  turnsPerSecond: number;
  /** Starting the conversations and their first turns, before timing. */
  warmupSeconds: number;
  timedOut: boolean;
  /** Conversations that failed (a turn that did not finish in time), and the first reason. */
  failed: number;
  firstError?: string;
  /** Worker process memory: idle before the level, at its end, and the largest sampled during it. */
  rssIdleMb: number;
  rssEndMb: number;
  rssPeakMb: number;
  heapUsedEndMb: number;
}

export interface ThroughputResult {
  levelLimitSeconds: number;
  /** On the embedded server. */
  stacks: Record<string, ThroughputLevel[]>;
  /** The same levels on the self-hosted cluster, when the run has one. */
  cluster?: { stacks: Record<string, ThroughputLevel[]> };
  table: string;
}

/**
 * At most `limit` of `task` run at once; returns the errors. After `maxErrors` errors no new item
 * is started: a stack that fails its conversations would otherwise take minutes of timeouts.
 */
async function inBatches<T>(
  items: T[],
  limit: number,
  maxErrors: number,
  task: (item: T) => Promise<void>,
): Promise<unknown[]> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && errors.length < maxErrors) {
        await task(items[next++]!).catch((error: unknown) => errors.push(error));
      }
    }),
  );
  return errors;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function measureLevel(
  context: BenchContext,
  stack: Stack,
  conversations: number,
  turnsPerConversation: number,
  limitSeconds: number,
): Promise<ThroughputLevel> {
  const taskQueue = `bench-throughput-${stack.name}-${conversations}-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue);
  try {
    const idle: MemoryReport = await worker.memory(true);
    // Every conversation is started and has had one turn (workflow start, tool lookup, caches warm) before timing.
    const driven: DrivenConversation[] = [];
    const warmupStarted = preciseNow();
    const warmupErrors = await inBatches(
      Array.from({ length: conversations }, (_, i) => i),
      50,
      5,
      async (i) => {
        const conversation = await DrivenConversation.start(
          context,
          stack,
          `throughput-${stack.name}-${conversations}-${i}-${randomUUID()}`,
          taskQueue,
        );
        await conversation.runTurn();
        driven.push(conversation);
      },
    );
    const warmupSeconds = (preciseNow() - warmupStarted) / 1_000;
    await worker.memory(true);

    const deadline = Date.now() + limitSeconds * 1_000;
    let turns = 0;
    let timedOut = false;
    const started = preciseNow();
    const settled = await Promise.allSettled(
      driven.map(async (conversation) => {
        for (let i = 0; i < turnsPerConversation; i++) {
          if (Date.now() > deadline) {
            timedOut = true;
            return;
          }
          await conversation.runTurn();
          turns++;
        }
      }),
    );
    const seconds = (preciseNow() - started) / 1_000;
    const errors = [
      ...warmupErrors,
      ...settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : [])),
    ];
    const end = await worker.memory();
    return {
      conversations,
      turnsPerConversation,
      turns,
      seconds: round(seconds),
      turnsPerSecond: round(turns / seconds, 1),
      warmupSeconds: round(warmupSeconds, 1),
      timedOut,
      failed: errors.length,
      ...(errors.length ? { firstError: messageOf(errors[0]) } : {}),
      rssIdleMb: mb(idle.rss),
      rssEndMb: mb(end.rss),
      rssPeakMb: mb(end.peakRss),
      heapUsedEndMb: mb(end.heapUsed),
    };
  } finally {
    await worker.stop();
  }
}

/**
 * Bench 3: C conversations at once on one worker, each sending its next message as soon as its
 * previous run finished; turns per second over all of them and the worker process's memory. Turns
 * per conversation shrink as C grows so every level does a bounded amount of work. On the
 * embedded server, then the same on the cluster when the run has one.
 */
export async function throughput(context: BenchContext): Promise<ThroughputResult> {
  const levels: Array<[number, number]> = context.quick
    ? [
        [1, 20],
        [10, 4],
        [100, 1],
        [500, 1],
      ]
    : [
        [1, 20],
        [10, 5],
        [100, 1],
        [500, 1],
      ];
  const limitSeconds = 60;
  const result: ThroughputResult = { levelLimitSeconds: limitSeconds, stacks: {}, table: '' };
  for (const server of serversToMeasure(context)) {
    const on = server.context;
    const stacks: Record<string, ThroughputLevel[]> = {};
    for (const stack of [durableStack(on), peerStack(on)]) {
      const measured: ThroughputLevel[] = [];
      for (const [conversations, turns] of levels) {
        const level = await measureLevel(on, stack, conversations, turns, limitSeconds);
        measured.push(level);
        context.log(
          `  ${stack.name}${server.suffix} ${conversations} conversations: ${level.turnsPerSecond} turns/s, peak RSS ${level.rssPeakMb} MB`,
        );
      }
      stacks[stack.name] = measured;
    }
    if (server.name === 'cluster') result.cluster = { stacks };
    else result.stacks = stacks;
  }
  const rows: Array<Array<string | number>> = [];
  const labelled = [
    ...Object.entries(result.stacks),
    ...Object.entries(result.cluster?.stacks ?? {}).map(
      ([name, measured]) => [`${name}${CLUSTER_SUFFIX}`, measured] as const,
    ),
  ];
  for (const [name, measured] of labelled) {
    for (const level of measured) {
      rows.push([
        name,
        level.conversations,
        `${level.turns}${level.timedOut ? ' (time limit)' : ''}${level.failed ? ` (${level.failed} failed)` : ''}`,
        level.turnsPerSecond,
        level.rssIdleMb,
        level.rssPeakMb,
        level.rssEndMb,
      ]);
    }
  }
  result.table = table(
    [
      'stack',
      'concurrent conversations',
      'timed turns',
      'turns/s',
      'worker RSS idle MB',
      'RSS peak MB',
      'RSS end MB',
    ],
    rows,
  );
  return result;
}
