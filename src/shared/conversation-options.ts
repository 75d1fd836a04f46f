import { z } from 'zod';
import { ApprovalSettingsSchema } from './approvals';
import { DEFAULT_MAX_TOOL_ITERATIONS } from './constants';

/** Chosen when a conversation starts; fixed for its life. */
export const ConversationOptionsSchema = z.object({
  /** Model name sent to the endpoint; the worker's AGENT_MODEL when absent. */
  model: z.string().min(1).optional(),
  systemPrompt: z.string().optional(),
  /** Model calls that ask for tools before a run is stopped with an error event. */
  maxToolIterations: z.number().int().min(1).default(DEFAULT_MAX_TOOL_ITERATIONS),
  /** Absolute path on the worker's machine that file and command tools are confined to; the worker's default when absent. */
  workspace: z.string().optional(),
  /** Tools offered to the model; every tool the worker has when absent. */
  tools: z.array(z.string()).optional(),
  /** Which tool calls wait for a person's decision, who may decide, and for how long. */
  approval: ApprovalSettingsSchema.default({}),
  /**
   * Continue as new (a fresh history, the conversation carried over) at the next idle point once a
   * run's history has this many events; also whenever Temporal suggests it. Only Temporal's suggestion when absent.
   */
  maxHistoryEvents: z.number().int().min(50).optional(),
  /** The conversation ends after this long without a message; never when absent. */
  idleTimeoutMs: z.number().int().positive().optional(),
});
export type ConversationOptions = z.infer<typeof ConversationOptionsSchema>;
export type ConversationOptionsInput = z.input<typeof ConversationOptionsSchema>;
