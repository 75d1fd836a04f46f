/** What a run tells the worker so it can write the default system prompt: all the rest it looks up itself. */
export interface SystemPromptRequest {
  /** The conversation's workspace; the worker's default when absent. */
  workspace?: string;
  /** The tools offered, each with whether its calls wait for a person's approval. */
  tools: Array<{ name: string; asks: boolean }>;
  /** An approval not given within this long counts as a rejection; no limit when absent. */
  approvalTimeoutMs?: number;
}

/** The most of all AGENTS.md files together the default prompt carries; the rest is cut with a note. */
export const AGENTS_MD_MAX_CHARS = 32 * 1024;

/** `given`, then `appended` after a blank line; either alone when the other is absent. */
export function withAppendedPrompt(
  given: string | undefined,
  appended: string | undefined,
): string | undefined {
  if (appended === undefined || appended === '') return given;
  return given ? `${given}\n\n${appended}` : appended;
}
