import { z } from 'zod';
import { ApprovalModeSchema, RiskLevelSchema } from './approvals';

/** Default timeouts per category: files 30 s, search 60 s, commands 300 s, MCP 120 s. */
export const ToolCategorySchema = z.enum(['files', 'search', 'commands', 'mcp', 'other']);
export type ToolCategory = z.infer<typeof ToolCategorySchema>;

/** A tool activity's retry policy. */
export const ToolRetrySchema = z.object({
  /** Attempts in all, the first included. */
  maximumAttempts: z.number().int().min(1),
  /** The wait before the first retry, in ms. */
  initialIntervalMs: z.number().int().positive(),
  /** What each wait is multiplied by for the next. */
  backoffCoefficient: z.number().min(1),
  /** The longest wait between attempts, in ms. */
  maximumIntervalMs: z.number().int().positive(),
});
export type ToolRetry = z.infer<typeof ToolRetrySchema>;

/**
 * What the workflow needs to know to schedule a tool: everything but the implementation.
 * Produced by the worker's tool registry and recorded once per conversation.
 */
export const ToolDescriptorSchema = z.object({
  /** The tool's name. */
  name: z.string(),
  /** Its human-readable name. */
  label: z.string(),
  /** Its kind of work, which set its default timeouts and retries. */
  category: ToolCategorySchema,
  /** Safe to run again after an attempt whose outcome is unknown (read-only tools). */
  idempotent: z.boolean(),
  /** How long one attempt may run, in ms. */
  startToCloseTimeoutMs: z.number().int().positive(),
  /** How long an attempt may go without a heartbeat, in ms. */
  heartbeatTimeoutMs: z.number().int().positive(),
  /** The activity's retry policy. */
  retry: ToolRetrySchema,
  /** Absent in descriptors recorded before approvals existed, which ran without asking. */
  risk: RiskLevelSchema.default('low'),
  /** The tool's own approval mode; follows from `risk` when absent. */
  approval: ApprovalModeSchema.optional(),
  /** Only an owner's run may call it (`owners`); absent in older descriptors. */
  ownerOnly: z.boolean().optional(),
  /**
   * The tool answers later through a callback that completes its activity (RAP): no heartbeats,
   * and a steer or abort stops waiting for it at once instead of waiting for it to stop.
   */
  asyncCompletion: z.boolean().optional(),
  /**
   * The tool reaches the host its `url` argument names: calls to these hosts run without asking,
   * calls to any other host ask, and allow_always / reject_always hold for one host at a time.
   */
  hostsWithoutApproval: z.array(z.string()).optional(),
  /**
   * The string parameter naming a thing that lives in one worker process (a background process): a
   * call whose value ends in that worker's tag runs on that worker's own task queue.
   */
  boundToWorkerBy: z.string().optional(),
  /**
   * A short read-only tool the worker running the conversation runs as a local activity: recorded
   * with the workflow task that scheduled it, two server round trips fewer than an activity.
   */
  local: z.boolean().optional(),
});
export type ToolDescriptor = z.infer<typeof ToolDescriptorSchema>;
export type ToolDescriptorInput = z.input<typeof ToolDescriptorSchema>;

/** What the `listTools` activity returns: the worker's tools, and why any external ones are missing. */
export interface ToolListing {
  tools: ToolDescriptorInput[];
  warnings: string[];
}
