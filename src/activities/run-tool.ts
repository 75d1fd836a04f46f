import { ApplicationFailure, Context } from '@temporalio/activity';
import { z } from 'zod';
import { ToolResultContentSchema } from '../shared/content';
import { MAX_TOOL_RESULT_BYTES } from '../shared/constants';
import { type ToolErrorKind, type ToolOutcome, toolErrorOutcome } from '../shared/tool-errors';
import type { ActivityProgress, ToolRunInput } from '../shared/tool-run';
import type { ToolRegistry } from '../tools/registry';
import type { ToolUpdate } from '../tools/tool';
import { ToolError } from '../tools/tool-error';
import { truncateText, truncateToolResult } from '../tools/truncate';
import { Workspace } from '../tools/workspace';
import { Heartbeater } from './heartbeater';

export interface ToolDeps {
  tools: ToolRegistry;
  /** Used when a conversation names no workspace of its own. */
  defaultWorkspace: string;
}

const ToolResultSchema = z.object({
  content: z.array(ToolResultContentSchema),
  details: z.unknown().optional(),
});
const PROGRESS_TEXT_BYTES = 4_096;
const ABORTED_NOTE = '[interrupted before it finished: the output above is partial]';

/**
 * Why the activity's signal fired, if it did. Only a cancel request from the workflow (steer, abort)
 * lets a partial result through; on a timeout or a worker shutdown the attempt fails as usual.
 */
function stoppedBy(context: Context): 'cancel_requested' | 'other' | undefined {
  if (!context.cancellationSignal.aborted) return undefined;
  return context.cancellationDetails?.cancelRequested ? 'cancel_requested' : 'other';
}

export function createRunTool(deps: ToolDeps) {
  const workspaces = new Map<string, Workspace>();
  const workspaceFor = (root: string) => {
    let workspace = workspaces.get(root);
    if (!workspace) {
      workspace = new Workspace(root);
      workspaces.set(root, workspace);
    }
    return workspace;
  };

  /**
   * Runs one tool call. Everything the model should read comes back as an outcome, errors included;
   * only an unexpected throw fails the activity, so Temporal retries it when the tool is idempotent.
   */
  return async function runTool(input: ToolRunInput): Promise<ToolOutcome> {
    const { toolName } = input;
    const tool = deps.tools.get(toolName);
    if (!tool) return errorOutcome(toolName, 'NotFound', `Tool not found: ${toolName}`);
    const parsed = tool.parameters.safeParse(input.arguments);
    if (!parsed.success)
      return errorOutcome(toolName, 'InvalidArgs', `invalid arguments: ${z.prettifyError(parsed.error)}`);
    let workspace: Workspace;
    try {
      workspace = workspaceFor(input.workspace ?? deps.defaultWorkspace);
    } catch (error) {
      return errorOutcome(
        toolName,
        'InvalidPath',
        `the conversation's workspace is unusable: ${(error as Error).message}`,
      );
    }

    const context = Context.current();
    const heartbeater = new Heartbeater<ActivityProgress>(context, {
      kind: 'tool',
      toolCallId: input.toolCallId,
      toolName,
    });
    const onUpdate = (update: ToolUpdate) => heartbeater.update(progressOf(input, update));
    try {
      const result = await tool.execute(input.toolCallId, parsed.data, context.cancellationSignal, onUpdate, {
        workspace,
        conversationId: input.conversationId,
      });
      const aborted = stoppedBy(context);
      if (aborted === 'other') throw context.cancellationSignal.reason;
      const valid = ToolResultSchema.safeParse(result);
      if (!valid.success)
        return errorOutcome(toolName, 'ExecutionFailed', 'the tool returned a malformed result');
      const content = valid.data.content.length
        ? valid.data.content
        : [{ type: 'text' as const, text: '(no output)' }];
      if (aborted === 'cancel_requested') {
        // What the tool had when it was interrupted: kept, and marked so the model knows it is partial.
        content.push({ type: 'text', text: ABORTED_NOTE });
        return {
          ...truncateToolResult({ content, details: valid.data.details }, MAX_TOOL_RESULT_BYTES),
          isError: false,
          aborted: true,
        };
      }
      return {
        ...truncateToolResult({ content, details: valid.data.details }, MAX_TOOL_RESULT_BYTES),
        isError: false,
      };
    } catch (error) {
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
      if (error instanceof ToolError) return errorOutcome(toolName, error.kind, error.message);
      throw ApplicationFailure.create({
        message: error instanceof Error ? error.message : String(error),
        type: 'ExecutionFailed',
        nonRetryable: !tool.idempotent,
      });
    } finally {
      heartbeater.stop();
    }
  };
}

function errorOutcome(tool: string, kind: ToolErrorKind, message: string): ToolOutcome {
  // Leaves room for the envelope and JSON escaping inside the result limit.
  return toolErrorOutcome(tool, kind, truncateText(message, MAX_TOOL_RESULT_BYTES - 16_384));
}

function progressOf(input: ToolRunInput, update: ToolUpdate): ActivityProgress {
  const text = update.content?.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
  return {
    kind: 'tool',
    toolCallId: input.toolCallId,
    toolName: input.toolName,
    ...(text !== undefined ? { text: truncateText(text, PROGRESS_TEXT_BYTES) } : {}),
    ...(update.details !== undefined ? { details: update.details } : {}),
  };
}
