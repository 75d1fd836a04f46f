import { z } from 'zod';
import { ApprovalModeSchema, RiskLevelSchema } from './approvals';

/** Default timeouts per category: files 30 s, search 60 s, commands 300 s, MCP 120 s. */
export const ToolCategorySchema = z.enum(['files', 'search', 'commands', 'mcp', 'other']);
export type ToolCategory = z.infer<typeof ToolCategorySchema>;

export const ToolRetrySchema = z.object({
  maximumAttempts: z.number().int().min(1),
  initialIntervalMs: z.number().int().positive(),
  backoffCoefficient: z.number().min(1),
  maximumIntervalMs: z.number().int().positive(),
});
export type ToolRetry = z.infer<typeof ToolRetrySchema>;

/**
 * What the workflow needs to know to schedule a tool: everything but the implementation.
 * Produced by the worker's tool registry and recorded once per conversation.
 */
export const ToolDescriptorSchema = z.object({
  name: z.string(),
  label: z.string(),
  category: ToolCategorySchema,
  /** Safe to run again after an attempt whose outcome is unknown (read-only tools). */
  idempotent: z.boolean(),
  startToCloseTimeoutMs: z.number().int().positive(),
  heartbeatTimeoutMs: z.number().int().positive(),
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
