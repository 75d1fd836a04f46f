import { type Rerun, type RerunTools, canonicalArguments } from '../shared/rerun';
import type { ToolCall } from '../shared/messages';
import type { ToolOutcome } from '../shared/tool-outcome';

/** How a rerun answers one call: with the original's result, or not (then `tools` says what to do). */
export type RecordedAnswer = { outcome: ToolOutcome } | { missing: true; tools: RerunTools };

/**
 * The original's tool results for one run of a rerun: a call with the name and arguments of one
 * the original made in the same run gets that call's result, each recorded call once, in order.
 */
export class RecordedToolResults {
  private readonly unused: Rerun['recorded'];

  constructor(
    private readonly rerun: Rerun,
    run: number,
  ) {
    this.unused = rerun.recorded.filter((call) => call.run === run);
  }

  answer(call: ToolCall): RecordedAnswer {
    const wanted = canonicalArguments(call.arguments);
    const index = this.unused.findIndex(
      (recorded) => recorded.toolName === call.name && recorded.arguments === wanted,
    );
    if (index < 0) return { missing: true, tools: this.rerun.tools };
    const [recorded] = this.unused.splice(index, 1);
    const { run: _run, toolName: _name, arguments: _args, ...outcome } = recorded!;
    return { outcome: { ...outcome, status: outcome.status ?? (outcome.isError ? 'error' : 'ok') } };
  }
}

/** What the model reads for a call a `recorded` rerun cannot answer. */
export function notRecordedMessage(toolName: string, run: number): string {
  return `not recorded: the original conversation made no ${toolName} call with these arguments in run ${run}, and this rerun runs no tool`;
}
