import { buildTimeline } from '../../history/build-timeline';
import { formatStateAtRun } from '../../history/format-state-at-run';
import { formatTimeline } from '../../history/format-timeline';
import { stateAtRun } from '../../history/state-at-run';
import type { Cleanups } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { type HistorySource, historySourceArg, readHistorySource } from '../history-source';
import { namedPositionals, parseCommandArgs, positiveInteger } from '../parse-command-args';
import { printable } from '../../shared/printable-text';

export interface HistoryArgs {
  /** A conversation on the server, or an exported history file. */
  source: HistorySource;
  json: boolean;
  /** Only the newest this many executions; all when absent. */
  executions?: number;
  /** Instead of the timeline: what each model call of this run was given, with what in force. */
  atRun?: number;
}

export function parseHistoryArgs(args: string[]): HistoryArgs {
  const { values, positionals } = parseCommandArgs('history', {
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      executions: { type: 'string' },
      at: { type: 'string' },
    },
  });
  const { 'ID|FILE': target } = namedPositionals('history', positionals, ['ID|FILE'] as const);
  const executions = positiveInteger(values.executions, '--executions');
  const atRun = positiveInteger(values.at, '--at');
  return {
    source: historySourceArg(target),
    json: values.json,
    ...(executions !== undefined ? { executions } : {}),
    ...(atRun !== undefined ? { atRun } : {}),
  };
}

/**
 * `history`: the timeline of a conversation, read from the Temporal histories of all its executions
 * (or from an exported file); with `--at N`, the state of run N from inside.
 */
export async function historyCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const history = parseHistoryArgs(args);
  const { client } = await connectAgent(cleanups, { startServer: false });
  const { conversationId, executions } = await readHistorySource(client, history.source, history.executions);
  const converter = client.options.loadedDataConverter.payloadConverter;
  if (history.atRun !== undefined) {
    const state = stateAtRun(conversationId, executions, history.atRun, converter);
    process.stdout.write(history.json ? `${JSON.stringify(state)}\n` : printable(formatStateAtRun(state)));
    return 0;
  }
  const timeline = buildTimeline(conversationId, executions, converter);
  process.stdout.write(history.json ? `${JSON.stringify(timeline)}\n` : printable(formatTimeline(timeline)));
  return 0;
}
