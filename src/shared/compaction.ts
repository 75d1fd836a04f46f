import { z } from 'zod';
import type { TranscriptDelta } from './model-call';

/**
 * When the transcript's estimated size passes `maxTokens`, the oldest turns are summarised by the
 * model and replaced by that summary, keeping the latest turns (about `keepTokens` of them, at
 * least the newest one). Tokens are estimated as characters / 4. Unknown keys are refused.
 */
export const CompactionSettingsSchema = z
  .strictObject({
    maxTokens: z.number().int().min(1_000).default(100_000),
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
}

export interface CompactionReceipt {
  compacted: boolean;
  removedMessages: number;
  tokensBefore: number;
  tokensAfter: number;
}
