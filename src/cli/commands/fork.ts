import { randomUUID } from 'node:crypto';
import { forkStart, startFork } from '../../client/fork-start';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { type HistorySource, historySourceArg, readHistorySource } from '../history-source';
import {
  conversationIdArg,
  namedPositionals,
  parseCommandArgs,
  positiveInteger,
} from '../parse-command-args';
import { UsageError } from '../usage-error';

export interface ForkArgs {
  /** A history file (a path that exists, as `export` writes it), else a conversation id. */
  source: HistorySource;
  atRun: number;
  /** The new conversation's id; a new one when absent. */
  newId?: string;
  /** Where the fork's tools work, instead of the original's workspace (which may be on another machine). */
  workspace?: string;
  json: boolean;
}

export function parseForkArgs(args: string[]): ForkArgs {
  const { values, positionals } = parseCommandArgs('fork', {
    args,
    allowPositionals: true,
    options: {
      at: { type: 'string' },
      id: { type: 'string' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const { 'ID|FILE': target } = namedPositionals('fork', positionals, ['ID|FILE'] as const);
  const atRun = positiveInteger(values.at, '--at');
  if (atRun === undefined) throw new UsageError('fork needs --at N: the run to fork at');
  return {
    source: historySourceArg(target),
    atRun,
    ...(values.id !== undefined ? { newId: conversationIdArg(values.id) } : {}),
    ...(values.workspace !== undefined ? { workspace: values.workspace } : {}),
    json: values.json,
  };
}

/**
 * `fork`: a new conversation whose transcript is another's up to the end of run N (read from its
 * history, or from a history file), with the options it had then. Nothing of the original runs
 * again and its history gets no event; the fork waits for its first message.
 */
export async function forkCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const fork = parseForkArgs(args);
  const { agent, client } = await connectAgent(cleanups, { startServer: false });
  const { conversationId, executions } = await readHistorySource(client, fork.source);
  const start = forkStart(
    conversationId,
    executions,
    fork.atRun,
    client.options.loadedDataConverter.payloadConverter,
    fork.workspace,
  );
  const newId = fork.newId ?? `conv-${randomUUID()}`;
  // The worker checks the fork against the original before anything runs: its answer is said
  // here rather than leave an id that is already dead.
  const { untaken } = await startFork(agent, newId, start);
  if (untaken)
    log(`no worker has taken ${newId} yet: the worker that does checks it against ${conversationId}`);
  const { forkedFrom } = start;
  const messages = start.carried.transcript.messages.length;
  process.stdout.write(
    fork.json ? `${JSON.stringify({ conversationId: newId, forkedFrom, messages })}\n` : `${newId}\n`,
  );
  return 0;
}
