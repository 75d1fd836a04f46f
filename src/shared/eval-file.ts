import { z } from 'zod';
import { RerunToolsSchema } from './rerun';

/** What `eval` changes in every conversation it reruns. */
export const EvalVariantSchema = z.strictObject({
  /** A model name for the worker's endpoint. */
  model: z.string().min(1).optional(),
  /** The system prompt, as text or as a file (relative to the eval file). */
  systemPrompt: z.string().optional(),
  systemPromptFile: z.string().optional(),
  /** The endpoint of eval's own worker (never handed to a shared worker). */
  baseUrl: z.string().url().optional(),
  tools: RerunToolsSchema.default('recorded'),
});

/** One recorded conversation to rerun, and what its last answer must match. */
export const EvalCaseSchema = z.strictObject({
  /** A conversation id on the server, or an exported history file (relative to the eval file). */
  source: z.string().min(1),
  /** The run to rerun from; 1 when absent. */
  at: z.number().int().min(1).optional(),
  /** A regular expression the rerun's last answer must match for the case to pass. */
  check: z.string().optional(),
});

/** An eval file: the variant, the conversations, and how many reruns at once. */
export const EvalFileSchema = z.strictObject({
  variant: EvalVariantSchema.prefault({}),
  conversations: z.array(EvalCaseSchema).min(1),
  concurrency: z.number().int().min(1).max(64).default(4),
});
export type EvalFile = z.infer<typeof EvalFileSchema>;
export type EvalCase = z.infer<typeof EvalCaseSchema>;
