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
  /**
   * Of each request after the first, the share of the previous request's input it repeats from the
   * start: 1 when nothing before the new messages changed (what a prefix cache needs).
   */
  previousKept: { min: number; requestsBelowWhole: number };
  /** Of each request after the first, the share of its own input that repeats the previous request's. */
  repeatedShare: { min: number; median: number; mean: number };
  /** Requests after the first whose repeated share is under TARGET_SHARE. */
  requestsUnderTarget: number;
  /** Those requests: their number (1 is the first), share, and the characters they repeat and add. */
  underTarget: Array<{ request: number; share: number; repeatedChars: number; newChars: number }>;
  /** Cached input tokens over input tokens, as the fake provider reported them across the conversation. */
  cachedShare: number;
  table: string;
}

/**
 * Bench 14: one conversation of 50 turns, each a tool call and an answer, with the default system
 * prompt and the built-in tools offered (as `durable-agent worker` offers them), against a model server that caches prompts by prefix as OpenAI, Gemini and DeepSeek do. A
 * runtime that keeps each request's input byte-stable except at its end (the new messages) repeats
 * every previous request whole and pays the cached price for nearly all of it; the share of a
 * request's own input that repeats is lower only while the conversation is short (its new messages
 * are then a larger part). Compaction would break the prefix by design; the conversation stays under
 * its budget.
 */
export async function prefixStability(context: BenchContext): Promise<PrefixStabilityResult> {
  const turns = context.quick ? 10 : 50;
  const stack = durableStack(context);
  const taskQueue = `bench-prefix-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue, { BENCH_BUILTIN_TOOLS: '1' });
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
    `  ${samples.length} requests, ${result.previousKept.requestsBelowWhole} not repeating the previous one whole; own input repeated: min ${result.repeatedShare.min}, median ${result.repeatedShare.median}; cached share ${result.cachedShare}`,
  );
  return result;
}

export function summarizePrefixes(turns: number, samples: PrefixSample[]): PrefixStabilityResult {
  const shares = samples.slice(1).map((sample) => sample.repeatedChars / sample.inputChars);
  const kept = samples.slice(1).map((sample, index) => sample.repeatedChars / samples[index]!.inputChars);
  const sorted = [...shares].sort((a, b) => a - b);
  const input = samples.reduce((sum, sample) => sum + sample.promptTokens, 0);
  const cached = samples.reduce((sum, sample) => sum + sample.cachedTokens, 0);
  const repeatedShare = {
    min: round(sorted[0] ?? Number.NaN, 4),
    median: round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, 4),
    mean: round(shares.reduce((sum, share) => sum + share, 0) / (shares.length || 1), 4),
  };
  const underTarget = shares.flatMap((share, index) => {
    const sample = samples[index + 1]!;
    return share < TARGET_SHARE
      ? [
          {
            request: index + 2,
            share: round(share, 4),
            repeatedChars: sample.repeatedChars,
            newChars: sample.inputChars - sample.repeatedChars,
          },
        ]
      : [];
  });
  const requestsUnderTarget = underTarget.length;
  const cachedShare = round(cached / (input || 1), 4);
  return {
    turns,
    requests: samples.length,
    previousKept: {
      min: round(Math.min(...kept), 4),
      requestsBelowWhole: kept.filter((share) => share < 1).length,
    },
    repeatedShare,
    requestsUnderTarget,
    underTarget,
    cachedShare,
    table: table(
      [
        'turns',
        'requests',
        'previous request kept whole',
        'own input repeated: min',
        'median',
        'mean',
        `requests under ${TARGET_SHARE * 100}%`,
        'cached share reported',
      ],
      [
        [
          turns,
          samples.length,
          `${kept.length - kept.filter((share) => share < 1).length} of ${kept.length}`,
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
