import type { ModelApi } from './model-api';
import { z } from 'zod';
import type { TranscriptDelta } from './model-call';
import type { Usage } from './messages';

/**
 * When the transcript's estimated size passes `maxTokens`, the oldest turns are summarised by the
 * model and replaced by that summary, keeping the latest turns (about `keepTokens` of them, at
 * least the newest one). Tokens are estimated as characters / 4. Unknown keys are refused.
 */
export const CompactionSettingsSchema = z
  .strictObject({
    /** The estimated transcript size that starts a compaction (default 100,000). */
    maxTokens: z.number().int().min(1_000).default(100_000),
    /** About how many tokens of the latest turns are kept as they are (default 20,000). */
    keepTokens: z.number().int().min(100).default(20_000),
  })
  .refine((settings) => settings.keepTokens < settings.maxTokens, 'keepTokens must be below maxTokens');
export type CompactionSettings = z.infer<typeof CompactionSettingsSchema>;

/** The instruction the summarising model call gets; scripted test models recognise it. */
export const SUMMARY_SYSTEM_PROMPT =
  'You are compacting the earlier part of a conversation between a user and an AI agent that uses tools, ' +
  'so the agent can carry on without the full text. Write a concise summary that keeps: what the user ' +
  'wants and every instruction they gave, decisions made, facts learned from tool results (paths, names, ' +
  'values, errors), what has been done and what remains. Write it as notes, not as a reply to the user.';

/** How the summary appears in the transcript, as the first message. */
export function summaryMessageText(summary: string): string {
  return `[Summary of the earlier conversation, which was compacted]\n${summary}`;
}

export interface SummarizeInput {
  /** The whole transcript by reference, as for a model call; messages [0, upTo) are summarised. */
  transcript: TranscriptDelta;
  upTo: number;
  model?: string;
  /** As in ModelCallInput: the API to call the model through; the worker's when absent. */
  api?: ModelApi;
  /** Asks for a SummaryResult (text and usage) instead of the plain text workers answered before. */
  withUsage?: boolean;
  /** As in ModelCallInput: the agent whose daily ledger the summary's tokens are reported to. */
  agentId?: string;
}

/** The summary and the tokens the endpoint reported for it (absent when it reported none). */
export interface SummaryResult {
  summary: string;
  usage?: Usage;
}

/**
 * What summarizeTranscript answered: the plain text (recorded by workers before usage was
 * reported, and still by a worker of that age), or a SummaryResult.
 */
export function summaryResultOf(answer: string | SummaryResult): SummaryResult {
  return typeof answer === 'string' ? { summary: answer } : answer;
}

/** What the `compact` update answers. */
export interface CompactionReceipt {
  /** False when nothing was compacted (too little to summarise, or the summary failed). */
  compacted: boolean;
  /** How many messages the summary replaced. */
  removedMessages: number;
  /** The transcript's estimated size before, in tokens. */
  tokensBefore: number;
  /** The transcript's estimated size after, in tokens. */
  tokensAfter: number;
}
