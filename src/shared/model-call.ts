import type { ClientTool } from './client-tools';
import type { ModelApi } from './model-api';
import type { Message } from './messages';

/**
 * A reference to the transcript instead of the transcript itself: the
 * model activity gets the messages added since its previous call and rebuilds the first `base`
 * messages from the worker's cache or, on a miss, by querying the workflow.
 */
export interface TranscriptDelta {
  conversationId: string;
  /** Bumped whenever earlier messages are rewritten (compaction), so stale caches are never used. */
  generation: number;
  base: number;
  newMessages: Message[];
}

export interface ModelCallInput {
  transcript: TranscriptDelta;
  /** Names of the tools offered; the worker turns them into schemas. */
  toolNames: string[];
  /** Tools the sender of the run's message carries out itself, offered with their schemas; absent when none. */
  clientTools?: ClientTool[];
  model?: string;
  systemPrompt?: string;
  /** The API to call the model through; the worker's when absent. */
  api?: ModelApi;
  /**
   * Set when the worker that admitted the conversation holds its agent to a daily token budget: the
   * call asks the agent's ledger first (and answers DailyBudgetSpent instead of calling the model
   * when the day is spent), then reports what it spent.
   */
  agentId?: string;
}
