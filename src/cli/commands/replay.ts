import { readFile } from 'node:fs/promises';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { type HistoryEventSummary, summarizeHistoryEvent } from '../../history/history-event-summary';
import { parseHistoryFile, workflowIdOf } from '../../history/history-file';
import { type Nondeterminism, parseNondeterminism } from '../../history/nondeterminism';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { type HistorySource, historySourceArg } from '../history-source';
import { namedPositionals, parseCommandArgs, positiveInteger } from '../parse-command-args';
import { readConversationHistory } from '../read-conversation-history';
import { printable } from '../../shared/printable-text';

type History = temporal.api.history.v1.IHistory;

export interface ReplayArgs {
  /** A history file (a path that exists), else a conversation id. */
  source: HistorySource;
  json: boolean;
  /** With a conversation id: only the newest this many executions. */
  executions?: number;
}

export function parseReplayArgs(args: string[]): ReplayArgs {
  const { values, positionals } = parseCommandArgs('replay', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, executions: { type: 'string' } },
  });
  const { 'FILE|ID': target } = namedPositionals('replay', positionals, ['FILE|ID'] as const);
  const executions = positiveInteger(values.executions, '--executions');
  return {
    source: historySourceArg(target),
    json: values.json,
    ...(executions !== undefined ? { executions } : {}),
  };
}

/** One history's replay, as `replay` reports it. */
export interface ReplayReport {
  execution: number;
  workflowId: string;
  runId: string;
  ok: boolean;
  nondeterminism?: Nondeterminism & { event?: HistoryEventSummary };
  /** A failure that is not nondeterminism (say, a payload that cannot be decoded). */
  error?: string;
}

export function formatReplayReport(report: ReplayReport, of: number): string {
  const head = `execution ${report.execution}/${of} (run id ${report.runId})`;
  if (report.ok) return `${head}: replays\n`;
  const found = report.nondeterminism;
  if (!found) return `${head}: replay failed: ${report.error}\n`;
  const where =
    found.eventId !== undefined
      ? ` at event ${found.eventId}${found.recorded ? ` ${found.recorded}` : ''}`
      : '';
  const lines = [`${head}: NONDETERMINISM${where}`];
  if (found.event) {
    lines.push(
      `  history records: ${found.event.type}${found.event.at ? ` at ${found.event.at}` : ''} ${JSON.stringify(found.event.attributes).slice(0, 1_000)}`,
    );
  } else if (found.recorded) {
    lines.push(`  history records: ${found.recorded}`);
  }
  if (found.expected) lines.push(`  the current code: ${found.expected}`);
  lines.push(`  Temporal says: ${found.detail}`);
  lines.push(
    '  A change to what the workflow schedules must go behind patched() (docs/operations.md, Changing the workflow safely).',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * `replay`: replays a history file or a conversation's executions against the current workflow code
 * (the bundle `npm run build` wrote). Exits 0 when every history replays, 1 otherwise.
 */
export async function replayCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const replay = parseReplayArgs(args);
  let histories: Array<{ runId?: string; history: History }>;
  let fallbackId: string;
  if ('file' in replay.source) {
    histories = parseHistoryFile(await readFile(replay.source.file, 'utf8')).map((history) => ({ history }));
    fallbackId = 'replay';
  } else {
    const { client } = await connectAgent(cleanups, { startServer: false });
    histories = await readConversationHistory(client, replay.source.conversationId, replay.executions);
    fallbackId = replay.source.conversationId;
  }
  if (!replay.json) {
    log(
      `replaying ${histories.length} execution${histories.length === 1 ? '' : 's'} against the current workflow code`,
    );
  }
  const { replayHistories } = await import('../../worker/replay-histories');
  const outcomes = await replayHistories(
    histories.map(({ history }) => ({ workflowId: workflowIdOf(history) ?? fallbackId, history })),
  );
  let failures = 0;
  outcomes.forEach((outcome, index) => {
    const history = histories[index]!.history;
    const report: ReplayReport = {
      execution: index + 1,
      workflowId: outcome.workflowId,
      runId: histories[index]!.runId ?? outcome.runId,
      ok: !outcome.failure,
    };
    if (outcome.failure) {
      failures++;
      const found =
        outcome.failure.kind === 'nondeterminism' ? parseNondeterminism(outcome.failure.message) : undefined;
      if (found) {
        const event =
          found.eventId !== undefined
            ? summarizeHistoryEvent(history, found.eventId, defaultPayloadConverter)
            : undefined;
        report.nondeterminism = { ...found, ...(event ? { event } : {}) };
      } else {
        report.error = outcome.failure.message;
      }
    }
    process.stdout.write(
      replay.json ? `${JSON.stringify(report)}\n` : printable(formatReplayReport(report, outcomes.length)),
    );
  });
  return failures ? 1 : 0;
}
