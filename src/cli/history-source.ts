import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import type { ExecutionHistory } from '../history/build-timeline';
import { parseHistoryFile, workflowIdOf } from '../history/history-file';
import { conversationIdArg } from './parse-command-args';
import { readConversationHistory } from './read-conversation-history';

/** Where a command reads a conversation's history: an exported file (as `export` writes it), or the server. */
export type HistorySource = { file: string } | { conversationId: string };

/** A path that exists is a history file; anything else must be a conversation id. */
export function historySourceArg(target: string): HistorySource {
  if (existsSync(target)) return { file: target };
  if (target.includes('/') || target.endsWith('.json')) throw new Error(`no such history file: ${target}`);
  return { conversationId: conversationIdArg(target) };
}

/** The conversation's id and its executions, oldest first, payloads decoded. */
export async function readHistorySource(
  client: Client,
  source: HistorySource,
  latest?: number,
): Promise<{ conversationId: string; executions: ExecutionHistory[] }> {
  if ('conversationId' in source) {
    return {
      conversationId: source.conversationId,
      executions: await readConversationHistory(client, source.conversationId, latest),
    };
  }
  const histories = parseHistoryFile(await readFile(source.file, 'utf8'));
  const executions = histories.map((history) => ({
    runId: history.events?.[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? '',
    history,
  }));
  return {
    conversationId: workflowIdOf(histories[0]!) ?? source.file,
    executions: latest ? executions.slice(-latest) : executions,
  };
}
