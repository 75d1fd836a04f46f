import { z } from 'zod';
import { ToolResultContentSchema, type ToolResultContent } from '../shared/content';
import { MAX_TOOL_RESULT_BYTES } from '../shared/constants';
import { type ToolOutcome, toolErrorOutcome } from '../shared/tool-errors';
import { sanitizeContentImages } from './image-sanitizer';
import { sanitizeOutcomeText, sanitizeText } from './text-sanitizer';
import { truncateText, truncateToolResult } from './truncate';
import { runToolResultPersist } from './run-tool-hooks';
import type { ToolCallInfo, ToolHooks } from './tool-hooks';

const ToolResultSchema = z.object({
  content: z.array(ToolResultContentSchema),
  details: z.unknown().optional(),
});

const NO_OUTPUT: ToolResultContent = { type: 'text', text: '(no output)' };
const INTERRUPTED_NOTE = '[interrupted before it finished: the output above is partial]';

/**
 * The finishing steps every tool result passes before it enters the transcript, whichever source
 * made it (a built-in, an MCP server, a RAP tool calling back) and however it arrived (an activity's
 * return or a callback completing it by task token).
 */
export interface ToolResultFinisher {
  /**
   * A tool's own result as the model reads it: images brought within the model's limits, an empty
   * result said as "(no output)", a note when it was cut off by a steer or abort, and cut to the
   * result limit. A malformed result becomes an error.
   */
  shape(toolName: string, result: unknown, options?: { interrupted?: boolean }): Promise<ToolOutcome>;
  /**
   * The last steps of every outcome, errors and blocks included: the tool_result_persist hooks
   * (which may rewrite it; a failing one fails closed), then control characters and terminal
   * escapes removed.
   */
  finish(call: ToolCallInfo, outcome: ToolOutcome): Promise<ToolOutcome>;
}

export function createToolResultFinisher(hooks: readonly ToolHooks[] = []): ToolResultFinisher {
  return {
    async shape(toolName, result, options = {}) {
      const valid = ToolResultSchema.safeParse(result);
      if (!valid.success) return toolErrorResult(toolName, 'the tool returned a malformed result');
      const content = valid.data.content.length
        ? await sanitizeContentImages(valid.data.content)
        : [NO_OUTPUT];
      // What the tool had when it was interrupted is kept, and marked so the model knows it is partial.
      if (options.interrupted) content.push({ type: 'text', text: INTERRUPTED_NOTE });
      return {
        ...truncateToolResult({ content, details: valid.data.details }, MAX_TOOL_RESULT_BYTES),
        isError: false,
        ...(options.interrupted ? { aborted: true } : {}),
      };
    },
    async finish(call, outcome) {
      return sanitizeOutcomeText(
        hooks.some((hook) => hook.toolResultPersist) ? await persist(call, outcome) : outcome,
      );
    },
  };

  async function persist(call: ToolCallInfo, outcome: ToolOutcome): Promise<ToolOutcome> {
    const original = { content: outcome.content, details: outcome.details };
    let rewritten;
    try {
      rewritten = await runToolResultPersist(hooks, { ...call, result: original, isError: outcome.isError });
    } catch (error) {
      return toolErrorResult(
        call.toolName,
        `the tool ran, but a tool_result_persist hook failed, so its result was not recorded: ${messageOf(error)}`,
      );
    }
    if (rewritten === original) return outcome;
    const valid = ToolResultSchema.safeParse(rewritten);
    if (!valid.success)
      return toolErrorResult(call.toolName, 'a tool_result_persist hook returned a malformed result');
    const content = valid.data.content.length ? valid.data.content : [NO_OUTPUT];
    return {
      ...outcome,
      ...truncateToolResult({ content, details: valid.data.details }, MAX_TOOL_RESULT_BYTES),
    };
  }
}

/** An ExecutionFailed result with `message`, cleaned and cut so the envelope stays within the result limit. */
export function toolErrorResult(
  toolName: string,
  message: string,
  kind: Parameters<typeof toolErrorOutcome>[1] = 'ExecutionFailed',
): ToolOutcome {
  return toolErrorOutcome(
    toolName,
    kind,
    truncateText(sanitizeText(message), MAX_TOOL_RESULT_BYTES - 16_384),
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
