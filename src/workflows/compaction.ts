import { type Spent, spentOf } from '../shared/budget';
import type { ModelApi } from '../shared/model-api';
import { isCancellation } from '@temporalio/workflow';
import {
  type CompactionReceipt,
  type CompactionSettings,
  summaryMessageText,
  summaryResultOf,
} from '../shared/compaction';
import { modelActivities } from './activity-proxies';
import type { EventLog } from './event-log';
import type { Transcript } from './transcript';
import { workflowTime } from './workflow-time';

export interface CompactionContext {
  conversationId: string;
  run: number;
  transcript: Transcript;
  events: EventLog;
  settings: CompactionSettings | false;
  model?: string;
  /** The API the summary is asked through, as the conversation's model calls are. */
  modelApi?: ModelApi;
  /** The agent held to a daily token budget, whose ledger the summary's tokens are reported to. */
  dailyBudgetAgent?: string;
  /** Counts the summary's tokens (and cost) in the conversation's budget. */
  spent: (spent: Spent) => void;
}

const NOT_COMPACTED = (tokens: number): CompactionReceipt => ({
  compacted: false,
  removedMessages: 0,
  tokensBefore: tokens,
  tokensAfter: tokens,
});

/**
 * Summarises the oldest turns when the transcript is over budget (or always, when `force`d and
 * there is something to summarise). A failed summary is an `error` event and the transcript stays
 * as it was; cancellation (abort) passes through.
 */
export async function compactIfNeeded(context: CompactionContext, force = false): Promise<CompactionReceipt> {
  const { transcript, events, settings, run } = context;
  const tokensBefore = transcript.estimatedTokens;
  if (settings === false && !force) return NOT_COMPACTED(tokensBefore);
  const keepTokens = settings === false ? 0 : settings.keepTokens;
  if (!force && settings !== false && tokensBefore <= settings.maxTokens) return NOT_COMPACTED(tokensBefore);
  const upTo = transcript.compactionPoint(keepTokens);
  if (upTo === undefined) return NOT_COMPACTED(tokensBefore);

  const delta = transcript.deltaForModel(context.conversationId);
  let summary: string;
  try {
    const answer = await modelActivities.summarizeTranscript.executeWithOptions(
      { summary: `compact: summarise the oldest ${upTo} messages` },
      [
        {
          transcript: delta,
          upTo,
          model: context.model,
          ...(context.modelApi !== undefined ? { api: context.modelApi } : {}),
          withUsage: true,
          ...(context.dailyBudgetAgent !== undefined ? { agentId: context.dailyBudgetAgent } : {}),
        },
      ],
    );
    const result = summaryResultOf(answer);
    summary = result.summary;
    if (result.usage) context.spent(spentOf(result.usage));
  } catch (error) {
    if (isCancellation(error)) throw error;
    events.record(run, {
      type: 'error',
      message: `compaction failed, the transcript is kept whole: ${(error as Error).message}`,
    });
    return NOT_COMPACTED(tokensBefore);
  }
  transcript.markSent(delta);
  transcript.compact(upTo, {
    role: 'user',
    content: summaryMessageText(summary),
    messageId: `compaction-${events.lastSeq + 1}`,
    timestamp: workflowTime(),
  });
  const receipt = {
    compacted: true,
    removedMessages: upTo,
    tokensBefore,
    tokensAfter: transcript.estimatedTokens,
  };
  events.record(run, {
    type: 'compacted',
    removedMessages: receipt.removedMessages,
    keptMessages: transcript.length - 1,
    tokensBefore: receipt.tokensBefore,
    tokensAfter: receipt.tokensAfter,
  });
  return receipt;
}

/** Forced compactions asked for by the `compact` update, taken at the next turn boundary or idle point. */
export class CompactionRequests {
  private requested = false;
  private completed = 0;
  private last: CompactionReceipt | undefined;

  request(): number {
    this.requested = true;
    return this.completed;
  }

  get pending(): boolean {
    return this.requested;
  }

  /** Whether the next compaction check must compact; clears the request. */
  take(): boolean {
    const requested = this.requested;
    this.requested = false;
    return requested;
  }

  report(receipt: CompactionReceipt, forced: boolean): void {
    if (!forced) return;
    this.last = receipt;
    this.completed++;
  }

  /** The receipt of the first forced compaction after `ticket` (from `request()`), once it is done. */
  receiptAfter(ticket: number): CompactionReceipt | undefined {
    return this.completed > ticket ? this.last : undefined;
  }
}
