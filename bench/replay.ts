import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { agentDataConverter } from '../src/worker/data-converter';
import { preciseNow } from './support/clock';
import { type BenchContext, withServer } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { historyBytes } from './support/history';
import { durableStack } from './support/stacks';
import { REPO_ROOT } from './support/worker-process';
import { round, table } from './support/stats';

/** Recording stops here even if short of the turns asked for, so the whole run stays bounded. */
const RECORD_LIMIT_SECONDS = 240;

export interface ReplayResult {
  /** Turns in the replayed history: `turnsAsked` unless recording hit its time limit. */
  turns: number;
  turnsAsked: number;
  events: number;
  bytes: number;
  /** Seconds to record the conversation (one turn after another). */
  recordSeconds: number;
  /** One replay: 1,000 turns take about half a minute, and the run has a time budget. */
  replayMs: number;
  replayMsPerTurn: number;
  table: string;
}

/**
 * Bench 6: a conversation of 1,000 turns in one history, replayed with Worker.runReplayHistory
 * against the same workflow bundle. Temporal suggests continuing as new long before 1,000 turns
 * (4 Ki events or 4 MB by default) and the conversation takes the suggestion, so this bench runs on
 * a server of its own with the suggestion thresholds raised: one run holding all 1,000 turns.
 * Replay runs in this process, from the fetched history, as `durable-agent` users replay theirs.
 */
export async function replay(context: BenchContext): Promise<ReplayResult> {
  const turns = context.quick ? 100 : 1_000;
  const dynamicConfig = {
    'limit.historyCount.suggestContinueAsNew': 1_000_000,
    'limit.historySize.suggestContinueAsNew': 1_000_000_000,
  };
  return withServer(context, dynamicConfig, async (serverContext) => {
    const stack = durableStack(serverContext);
    const client = serverContext.durableClient;
    const taskQueue = `bench-replay-${randomUUID()}`;
    const worker = await stack.startWorker(taskQueue);
    const began = preciseNow();
    let conversation: DrivenConversation;
    try {
      conversation = await DrivenConversation.start(
        serverContext,
        stack,
        `replay-${randomUUID()}`,
        taskQueue,
      );
      const deadline = Date.now() + RECORD_LIMIT_SECONDS * 1_000;
      while (conversation.turns < turns && Date.now() < deadline) {
        await conversation.runTurn();
        if (conversation.turns % 250 === 0) context.log(`  recorded ${conversation.turns} turns`);
      }
    } finally {
      await worker.stop();
    }
    const recordSeconds = (preciseNow() - began) / 1_000;
    if (conversation.runIds.length !== 1)
      throw new Error('the conversation continued as new: the history is split');
    const history = await client.workflow.getHandle(conversation.id).fetchHistory();
    // Kept for profiling the replay on its own: `History.decode` of this file is what was replayed.
    await writeFile(
      path.join(REPO_ROOT, 'bench', 'results', 'replay-history.bin'),
      temporal.api.history.v1.History.encode(history).finish(),
    );
    const started = preciseNow();
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: context.durableBundle }, dataConverter: agentDataConverter() },
      history,
      conversation.id,
    );
    const replayMs = round(preciseNow() - started);
    const result: ReplayResult = {
      turns: conversation.turns,
      turnsAsked: turns,
      events: history.events?.length ?? 0,
      bytes: historyBytes(history),
      recordSeconds: round(recordSeconds, 1),
      replayMs,
      replayMsPerTurn: round(replayMs / conversation.turns, 1),
      table: '',
    };
    result.table = table(
      [
        'replay (durable-agent, Worker.runReplayHistory)',
        'turns',
        'events',
        'history MB',
        'replay ms',
        'ms per turn',
      ],
      [
        [
          'one conversation in one run',
          conversation.turns < turns ? `${conversation.turns} (time limit)` : conversation.turns,
          result.events,
          round(result.bytes / 2 ** 20, 2),
          replayMs,
          result.replayMsPerTurn,
        ],
      ],
    );
    return result;
  });
}
