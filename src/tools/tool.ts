import type { z } from 'zod';
import type { ApprovalMode, RiskLevel } from '../shared/approvals';
import type { ToolResultContent } from '../shared/content';
import type { ToolCategory, ToolRetry } from '../shared/tool-descriptor';
import type { Workspace } from './workspace';

/** What a tool returns: `content` goes to the model, `details` to user interfaces and logs (tool-system.md §1.3). */
export interface ToolResult<TDetails = unknown> {
  content: ToolResultContent[];
  details?: TDetails;
}

export type ToolUpdate = Partial<ToolResult>;

export interface ToolContext {
  workspace: Workspace;
  conversationId: string;
}

/**
 * The tool contract of tool-system.md §1. `parameters` is one zod schema: it yields the JSON schema the
 * model sees and validates what the model sends. `execute` must honour `signal` (the activity was
 * cancelled or timed out) and may report progress through `onUpdate`, which heartbeats. It throws a
 * `ToolError` for an answer the model should read as an error; any other throw is an unexpected
 * failure, retried only when the tool is `idempotent`.
 */
export interface AgentTool<TParams extends z.ZodType = z.ZodType> {
  name: string;
  label: string;
  description: string;
  parameters: TParams;
  category: ToolCategory;
  /** Safe to run again when an attempt's outcome is unknown: read-only tools. */
  idempotent: boolean;
  /** What the tool can do to the world; decides whether a call needs approval unless `approval` says otherwise. */
  risk: RiskLevel;
  /** Overrides the approval mode that follows from `risk`. */
  approval?: ApprovalMode;
  /** Overrides the category's default timeouts and retry policy. */
  startToCloseTimeoutMs?: number;
  heartbeatTimeoutMs?: number;
  retry?: Partial<ToolRetry>;
  execute(
    toolCallId: string,
    params: z.output<TParams>,
    signal: AbortSignal,
    onUpdate: (update: ToolUpdate) => void,
    context: ToolContext,
  ): Promise<ToolResult>;
}

export function defineTool<TParams extends z.ZodType>(tool: AgentTool<TParams>): AgentTool<TParams> {
  return tool;
}

export function textResult(text: string, details?: unknown): ToolResult {
  return { content: [{ type: 'text', text }], details };
}
