import { writeFile } from 'node:fs/promises';
import { historyFileText } from '../../history/history-file';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { readConversationHistory } from '../read-conversation-history';

export interface ExportArgs {
  conversationId: string;
  file: string;
  /** Every execution as a JSON array, oldest first; otherwise the current execution as one history. */
  allExecutions: boolean;
  json: boolean;
}

export function parseExportArgs(args: string[]): ExportArgs {
  const { values, positionals } = parseCommandArgs('export', {
    args,
    allowPositionals: true,
    options: {
      'all-executions': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const { ID, FILE } = namedPositionals('export', positionals, ['ID', 'FILE'] as const);
  return {
    conversationId: conversationIdArg(ID),
    file: FILE,
    allExecutions: values['all-executions'],
    json: values.json,
  };
}

/**
 * `export`: a conversation's history as a JSON file that `replay` (or `Worker.runReplayHistory`)
 * takes. Payloads are written decoded (compressed and blob-stored ones inlined), so the file
 * replays on any machine.
 */
export async function exportCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const exported = parseExportArgs(args);
  const { client } = await connectAgent(cleanups, { startServer: false });
  const executions = await readConversationHistory(
    client,
    exported.conversationId,
    exported.allExecutions ? undefined : 1,
  );
  const histories = executions.map((execution) => execution.history);
  await writeFile(exported.file, historyFileText(histories, { array: exported.allExecutions }));
  const events = histories.reduce((sum, history) => sum + (history.events?.length ?? 0), 0);
  const what = exported.allExecutions
    ? `${histories.length} execution${histories.length === 1 ? '' : 's'}`
    : `execution ${executions[0]?.runId}`;
  log(`wrote ${events} events of ${what} of conversation ${exported.conversationId} to ${exported.file}`);
  if (exported.json) {
    const runIds = executions.map((execution) => execution.runId);
    process.stdout.write(
      `${JSON.stringify({ conversationId: exported.conversationId, file: exported.file, runIds, events })}\n`,
    );
  }
  return 0;
}
