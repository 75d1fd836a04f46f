import { randomUUID } from 'node:crypto';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import type { PrefixSample } from './support/prompt-cache';
import { durableStack } from './support/stacks';
import { round, table } from './support/stats';

/** What providers cache is worth only if nearly all of each request repeats the one before it. */
const TARGET_SHARE = 0.95;

export interface PrefixStabilityResult {
  turns: number;
  requests: number;
  /** Of each request after the first, the share of its input that repeats the previous request's, from the start. */
  repeatedShare: { min: number; median: number; mean: number };
  /** Requests after the first whose repeated share is under TARGET_SHARE. */
  requestsUnderTarget: number;
  /** Cached input tokens over input tokens, as the fake provider reported them across the conversation. */
  cachedShare: number;
  table: string;
}

/**
 * Bench 14: one conversation of 50 turns, each a tool call and an answer, with the default system
 * prompt and every built-in tool offered, against a model server that caches prompts by prefix as
 * OpenAI, Gemini and DeepSeek do. A runtime that keeps each request's input byte-stable except at
 * its end (the new messages) pays the cached price for nearly all of it. Compaction would break the
 * prefix by design; the conversation stays under its budget.
 */
export async function prefixStability(context: BenchContext): Promise<PrefixStabilityResult> {
  const turns = context.quick ? 10 : 50;
  const stack = durableStack(context);
  const taskQueue = `bench-prefix-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue);
  const id = `prefix-${randomUUID()}`;
  try {
    const conversation = await DrivenConversation.start(context, stack, id, taskQueue);
    for (let turn = 1; turn <= turns; turn++) {
      await conversation.runTurn({ tool: 'noop', args: { note: `turn ${turn}` } });
    }
  } finally {
    await worker.stop();
  }
  const samples = context.model.promptCache.samples.get(id) ?? [];
  const result = summarizePrefixes(turns, samples);
  context.log(
    `  ${samples.length} requests: repeated share min ${result.repeatedShare.min}, median ${result.repeatedShare.median}; cached share ${result.cachedShare}`,
  );
  return result;
}

export function summarizePrefixes(turns: number, samples: PrefixSample[]): PrefixStabilityResult {
  const shares = samples.slice(1).map((sample) => sample.repeatedChars / sample.inputChars);
  const sorted = [...shares].sort((a, b) => a - b);
  const input = samples.reduce((sum, sample) => sum + sample.promptTokens, 0);
  const cached = samples.reduce((sum, sample) => sum + sample.cachedTokens, 0);
  const repeatedShare = {
    min: round(sorted[0] ?? Number.NaN, 4),
    median: round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, 4),
    mean: round(shares.reduce((sum, share) => sum + share, 0) / (shares.length || 1), 4),
  };
  const requestsUnderTarget = shares.filter((share) => share < TARGET_SHARE).length;
  const cachedShare = round(cached / (input || 1), 4);
  return {
    turns,
    requests: samples.length,
    repeatedShare,
    requestsUnderTarget,
    cachedShare,
    table: table(
      [
        'turns',
        'requests',
        'repeated share: min',
        'median',
        'mean',
        `requests under ${TARGET_SHARE * 100}%`,
        'cached share reported',
      ],
      [
        [
          turns,
          samples.length,
          repeatedShare.min,
          repeatedShare.median,
          repeatedShare.mean,
          requestsUnderTarget,
          cachedShare,
        ],
      ],
    ),
  };
}
