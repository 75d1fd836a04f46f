import { z } from 'zod';
import { ToolResultContentSchema, type ToolResultContent } from '../shared/content';
import { ERROR_MESSAGE_BYTES, MAX_TOOL_RESULT_BYTES } from '../shared/constants';
import { type ToolOutcome, errorOutcome, okOutcome, partialOutcome } from '../shared/tool-outcome';
import { sanitizeContentImages } from './image-sanitizer';
import { sanitizeOutcomeText, sanitizeText } from './text-sanitizer';
import type { ToolResult } from './tool';
import { truncateText, truncateToolResult } from './truncate';
import { runToolResultPersist } from './run-tool-hooks';
import type { ToolCallInfo, ToolHooks } from './tool-hooks';

const ToolResultSchema = z.object({
  content: z.array(ToolResultContentSchema),
  details: z.unknown().optional(),
});

const NO_OUTPUT: ToolResultContent = { type: 'text', text: '(no output)' };
/** Fits in RESULT_NOTE_ROOM_BYTES, the room a tool leaves at the end of a full result. */
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
   * result limit. A malformed result becomes an error (see `parseToolResult`).
   */
  shape(
    toolName: string,
    result: unknown,
    options?: {
      /** The call was cut off by a steer or abort: what it had is kept and marked as partial. */
      interrupted?: boolean;
    },
  ): Promise<ToolOutcome>;
  /**
   * The last steps of every outcome, errors and blocks included: the tool_result_persist hooks
   * (which may rewrite it; a failing one fails closed), then control characters and terminal
   * escapes removed.
   */
  finish(call: ToolCallInfo, outcome: ToolOutcome): Promise<ToolOutcome>;
}

/** The finisher that runs `hooks` (in order) on every outcome; none by default. */
export function createToolResultFinisher(hooks: readonly ToolHooks[] = []): ToolResultFinisher {
  return {
    async shape(toolName, result, options = {}) {
      const parsed = parseToolResult(result);
      if (!parsed.ok) return errorOutcome(toolName, 'ExecutionFailed', parsed.error);
      const content = parsed.result.content.length
        ? await sanitizeContentImages(parsed.result.content)
        : [NO_OUTPUT];
      // What the tool had when it was interrupted is kept, and marked so the model knows it is partial.
      if (options.interrupted) content.push({ type: 'text', text: INTERRUPTED_NOTE });
      const bounded = truncateToolResult({ content, details: parsed.result.details }, MAX_TOOL_RESULT_BYTES);
      return options.interrupted ? partialOutcome(bounded) : okOutcome(bounded);
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
      return errorOutcome(
        call.toolName,
        'ExecutionFailed',
        cleanErrorMessage(
          `the tool ran, but a tool_result_persist hook failed, so its result was not recorded: ${messageOf(error)}`,
        ),
      );
    }
    if (rewritten === original) return outcome;
    const valid = ToolResultSchema.safeParse(rewritten);
    if (!valid.success)
      return errorOutcome(
        call.toolName,
        'ExecutionFailed',
        'a tool_result_persist hook returned a malformed result',
      );
    const content = valid.data.content.length ? valid.data.content : [NO_OUTPUT];
    // The status stays; a reason no longer says what the model reads once the text is rewritten.
    const { reason: _rewritten, ...kept } = outcome;
    return {
      ...kept,
      ...truncateToolResult({ content, details: valid.data.details }, MAX_TOOL_RESULT_BYTES),
    };
  }
}

/** A tool's return value as a result, or why it is none (an ExecutionFailed error for the model). */
export function parseToolResult(
  value: unknown,
): { ok: true; result: ToolResult } | { ok: false; error: string } {
  const valid = ToolResultSchema.safeParse(value);
  return valid.success
    ? { ok: true, result: valid.data }
    : { ok: false, error: 'the tool returned a malformed result' };
}

/**
 * An error message fit for an error result: control characters and terminal escapes removed, cut to
 * ERROR_MESSAGE_BYTES so the envelope stays within the result limit. For messages that may be long
 * or come from outside the runtime (a tool's, a hook's).
 */
export function cleanErrorMessage(message: string): string {
  return truncateText(sanitizeText(message), ERROR_MESSAGE_BYTES);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
