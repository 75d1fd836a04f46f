import type { z } from 'zod';
import type { ApprovalMode, RiskLevel } from '../shared/approvals';
import type { ToolResultContent } from '../shared/content';
import type { ExecSecurityMode } from '../shared/exec-security';
import type { ToolCategory, ToolRetry } from '../shared/tool-descriptor';
import { type ImageSanitizationLimits, ImageRejectedError, sanitizeImage } from './image-sanitizer';
import { ToolError } from './tool-error';
import type { Workspace } from './workspace';

/** What a tool returns: `content` goes to the model, `details` to user interfaces and logs. */
export interface ToolResult<TDetails = unknown> {
  /** What the model reads: text and images. */
  content: ToolResultContent[];
  /** Anything else, for user interfaces and logs; the model never sees it. */
  details?: TDetails;
}

/** A tool's progress report while it runs (passed to `execute`'s `onUpdate`): any part of a result. */
export type ToolUpdate = Partial<ToolResult>;

/** What a tool's `execute` gets besides its arguments: the workspace and the conversation it runs for. */
export interface ToolContext {
  /** The conversation's workspace: the directory file and exec tools work in. */
  workspace: Workspace;
  /** The conversation the call belongs to. */
  conversationId: string;
  /** The conversation's agent: whose durable memory the memory tools use. */
  agentId: string;
  /** The `exec` security mode the conversation asked for; the worker's own applies when absent or looser. */
  execSecurity?: ExecSecurityMode;
  /** The conversations above this one, outermost first, when it is a sub-agent. */
  ancestors?: string[];
  /** Who sent the message the run answers, when named. */
  userId?: string;
  /**
   * Once `signal` has fired: whether the conversation asked the call to stop (a steer or an abort),
   * rather than a timeout or the worker shutting down, after which the call is tried again. A tool
   * that started work elsewhere cancels it only then. Absent where nobody knows.
   */
  stopRequested?: () => boolean;
}

/**
 * The tool contract. `parameters` is one zod schema: it yields the JSON schema the
 * model sees and validates what the model sends. `execute` must honour `signal` (the activity was
 * cancelled or timed out) and may report progress through `onUpdate`, which heartbeats. It throws a
 * `ToolError` for an answer the model should read as an error; any other throw is an unexpected
 * failure, retried only when the tool is `idempotent`.
 */
export interface AgentTool<TParams extends z.ZodType = z.ZodType> {
  /** The name the model calls it by; unique in a registry. */
  name: string;
  /** A short human-readable name, for user interfaces. */
  label: string;
  /** What the tool does, for the model. */
  description: string;
  /** The zod schema of the arguments: the model sees its JSON schema, and arguments are validated with it. */
  parameters: TParams;
  /** Its kind of work, which sets its default timeouts and retry policy. */
  category: ToolCategory;
  /** Safe to run again when an attempt's outcome is unknown: read-only tools. */
  idempotent: boolean;
  /** What the tool can do to the world; decides whether a call needs approval unless `approval` says otherwise. */
  risk: RiskLevel;
  /** Overrides the approval mode that follows from `risk`. */
  approval?: ApprovalMode;
  /**
   * Only runs that the conversation's owners started may call it; anyone else's get the error
   * "Tool restricted to owner senders." and the model is not offered it.
   */
  ownerOnly?: boolean;
  /**
   * String parameters taken exactly as sent: not trimmed, and empty is a value, not "missing"
   * (file contents, text to match or replace). Every other string parameter is trimmed (param-normalization.ts).
   */
  verbatimParameters?: readonly string[];
  /**
   * The parameters' JSON schema as an external tool server gave it (MCP, RAP). When set it is what the
   * model sees and what arguments are normalised against; `parameters` then only has to accept objects.
   */
  inputJsonSchema?: Record<string, unknown>;
  /**
   * `execute` throws `CompleteAsyncError` once the work is handed over, and something else completes
   * the activity later by its task token (RAP tools). Its heartbeat timeout is not used.
   */
  asyncCompletion?: boolean;
  /**
   * The tool reaches the host its `url` argument names: calls to these hosts run without asking,
   * any other host asks, and standing decisions hold per host.
   */
  hostsWithoutApproval?: readonly string[];
  /**
   * The tool works on things that live in this worker process (background processes), named by the
   * string parameter `idParameter` with ids ending in `-workerTag`. A call naming one runs on the
   * worker holding it: that worker also polls a task queue of its own for `workerTag`.
   */
  workerBound?: {
    /** The string parameter that names the thing. */
    idParameter: string;
    /** This worker's tag, the end of the ids it hands out. */
    workerTag: string;
  };
  /**
   * Short and read-only (it must be `idempotent`): the worker running the conversation runs it as a
   * local activity, inside the workflow task that scheduled it, and its result is recorded with
   * that task's completion. A turn that calls it waits for two server round trips fewer. The price:
   * it runs where the conversation runs (not on any worker), it sends no progress, and a steer or
   * abort reaches it only once the workflow task has run for most of its timeout (about 3 s).
   */
  local?: boolean;
  /** Overrides the category's default timeouts and retry policy. */
  startToCloseTimeoutMs?: number;
  /** Overrides the category's heartbeat timeout: how long the tool may go without calling `onUpdate`. */
  heartbeatTimeoutMs?: number;
  /** Overrides parts of the category's retry policy. */
  retry?: Partial<ToolRetry>;
  /**
   * Runs one call: the call's id, the validated arguments, the cancellation signal, a progress
   * callback and the call's context. Resolves to the result; throws a `ToolError` for an error the
   * model should read.
   */
  execute(
    toolCallId: string,
    params: z.output<TParams>,
    signal: AbortSignal,
    onUpdate: (update: ToolUpdate) => void,
    context: ToolContext,
  ): Promise<ToolResult>;
}

/** Declares a tool, inferring the type of its arguments from `parameters`; returns it unchanged. */
export function defineTool<TParams extends z.ZodType>(tool: AgentTool<TParams>): AgentTool<TParams> {
  return tool;
}

/**
 * A tool the conversation workflow runs itself (a sub-agent, a subscription's cancel): declared
 * like any other, so the model is offered it and policies and approvals see it, but with no
 * `execute`, since no worker runs it.
 */
export type WorkflowTool<TParams extends z.ZodType = z.ZodType> = Omit<AgentTool<TParams>, 'execute'>;

/** What a registry holds: tools a worker runs, and tools the workflow runs. */
export type RegisteredTool = AgentTool | WorkflowTool;

export function defineWorkflowTool<TParams extends z.ZodType>(
  tool: WorkflowTool<TParams>,
): WorkflowTool<TParams> {
  return tool;
}

export function runsOnWorker(tool: RegisteredTool): tool is AgentTool {
  return typeof (tool as Partial<AgentTool>).execute === 'function';
}

/** A plain-text result: `text` for the model, `details` for user interfaces and logs. */
export function textResult(text: string, details?: unknown): ToolResult {
  return { content: [{ type: 'text', text }], details };
}

/**
 * An image for the model, brought within `limits` (resized or re-encoded when
 * larger), after an optional line of text. `details` default to the image's final size and type.
 * Data that is not a usable image is a ToolError.
 */
export async function imageResult(params: {
  /** The encoded image, as bytes or base64. */
  data: Buffer | string;
  /** The image's type, e.g. `image/png`. */
  mimeType: string;
  /** A line of text before the image. */
  text?: string;
  /** Details for user interfaces and logs; the image's final size and type when absent. */
  details?: unknown;
  /** The largest image the model gets; the worker's defaults for what is absent. */
  limits?: Partial<ImageSanitizationLimits>;
}): Promise<ToolResult> {
  const data = typeof params.data === 'string' ? params.data : params.data.toString('base64');
  try {
    const sanitized = await sanitizeImage({ type: 'image', data, mimeType: params.mimeType }, params.limits);
    const { mimeType } = sanitized.image;
    return {
      content: [...(params.text ? [{ type: 'text' as const, text: params.text }] : []), sanitized.image],
      details: params.details ?? {
        mimeType,
        width: sanitized.width,
        height: sanitized.height,
        bytes: sanitized.bytes,
        resized: sanitized.changed,
      },
    };
  } catch (error) {
    if (error instanceof ImageRejectedError) throw new ToolError('ExecutionFailed', error.message);
    throw error;
  }
}

/** A JSON payload: pretty-printed for the model, the payload itself as details. */
export function jsonResult(payload: unknown): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(payload, null, 2) ?? 'null' }], details: payload };
}
