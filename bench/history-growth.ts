import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { measureRun } from './support/history';
import { type Stack, durableStack, peerStack } from './support/stacks';
import { round, table } from './support/stats';

/** A stack that has not reached the last checkpoint by then stops there (the peer's turns slow down as its history grows). */
const LIMIT_SECONDS = 60;

export interface HistoryCheckpoint {
  turns: number;
  /** All runs of the conversation together (continue-as-new starts a new run). */
  runs: number;
  events: number;
  bytes: number;
  /** Since the previous checkpoint, per turn. */
  eventsPerTurn: number;
  bytesPerTurn: number;
}

export interface HistoryGrowthResult {
  turns: number;
  stacks: Record<string, { checkpoints: HistoryCheckpoint[]; secondsTotal: number; stoppedEarly?: string }>;
  table: string;
}

/** All runs of a conversation together. */
async function measure(client: Client, workflowId: string, runIds: string[]) {
  let events = 0;
  let bytes = 0;
  for (const runId of runIds) {
    const run = await measureRun(client, workflowId, runId);
    events += run.events;
    bytes += run.bytes;
  }
  return { events, bytes };
}

async function grow(context: BenchContext, stack: Stack, checkpoints: number[], limitSeconds: number) {
  const taskQueue = `bench-history-${stack.name}-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue);
  const began = Date.now();
  try {
    const conversation = await DrivenConversation.start(
      context,
      stack,
      `history-${stack.name}-${randomUUID()}`,
      taskQueue,
    );
    const measured: HistoryCheckpoint[] = [];
    let previous = { turns: 0, ...(await measure(stack.client, conversation.id, conversation.runIds)) };
    let stoppedEarly: string | undefined;
    for (const checkpoint of checkpoints) {
      while (conversation.turns < checkpoint) {
        if (Date.now() - began > limitSeconds * 1_000) {
          stoppedEarly = `time limit of ${limitSeconds} s reached after ${conversation.turns} turns`;
          break;
        }
        await conversation.runTurn();
      }
      if (conversation.turns === previous.turns) break;
      const now = {
        turns: conversation.turns,
        ...(await measure(stack.client, conversation.id, conversation.runIds)),
      };
      const turns = now.turns - previous.turns;
      measured.push({
        turns: now.turns,
        runs: conversation.runIds.length,
        events: now.events,
        bytes: now.bytes,
        eventsPerTurn: round((now.events - previous.events) / turns, 1),
        bytesPerTurn: Math.round((now.bytes - previous.bytes) / turns),
      });
      previous = now;
      if (stoppedEarly) break;
    }
    return { checkpoints: measured, secondsTotal: round((Date.now() - began) / 1_000, 1), stoppedEarly };
  } finally {
    await worker.stop();
  }
}

/**
 * Bench 5: one conversation grows turn by turn to 200 turns; at checkpoints, the history of all its
 * runs is fetched and measured (encoded protobuf bytes, events). Per turn between checkpoints it
 * must stay flat for durable-agent (linear history).
 */
export async function historyGrowth(context: BenchContext): Promise<HistoryGrowthResult> {
  const turns = context.quick ? 50 : 200;
  const checkpoints = context.quick ? [1, 10, 25, 50] : [1, 10, 25, 50, 100, 150, 200];
  const result: HistoryGrowthResult = { turns, stacks: {}, table: '' };
  for (const stack of [durableStack(context), peerStack(context)]) {
    result.stacks[stack.name] = await grow(context, stack, checkpoints, LIMIT_SECONDS);
    const last = result.stacks[stack.name]!.checkpoints.at(-1);
    context.log(
      `  ${stack.name}: ${last?.turns} turns, ${last?.bytes} bytes, ${last?.bytesPerTurn} bytes/turn at the end`,
    );
  }
  const rows: Array<Array<string | number>> = [];
  for (const [name, entry] of Object.entries(result.stacks)) {
    for (const checkpoint of entry.checkpoints) {
      rows.push([
        name,
        checkpoint.turns,
        checkpoint.runs,
        checkpoint.events,
        round(checkpoint.bytes / 1024, 1),
        checkpoint.eventsPerTurn,
        checkpoint.bytesPerTurn,
      ]);
    }
  }
  const stopped = Object.entries(result.stacks).flatMap(([name, entry]) =>
    entry.stoppedEarly ? [`${name}: ${entry.stoppedEarly}.`] : [],
  );
  result.table = [
    table(
      [
        'stack',
        'turns',
        'runs',
        'history events',
        'history KB',
        'events/turn since previous',
        'bytes/turn since previous',
      ],
      rows,
    ),
    ...stopped,
  ].join('\n\n');
  return result;
}
