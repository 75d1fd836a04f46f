import { randomUUID } from 'node:crypto';
import { transcriptAtRun } from '../../history/transcript-at-run';
import type { ForkedFrom } from '../../shared/conversation-api';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../../shared/conversation-options';
import { schemaProblems } from '../../shared/schema-problems';
import type { CarriedConversation } from '../../workflows/conversation-carry';
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
  const at = transcriptAtRun(
    conversationId,
    executions,
    fork.atRun,
    client.options.loadedDataConverter.payloadConverter,
  );
  const options = forkOptions(at.options, fork.workspace);
  const forkedFrom: ForkedFrom = {
    conversationId,
    ...(at.runId ? { runId: at.runId } : {}),
    atRun: fork.atRun,
  };
  const carried: CarriedConversation = {
    transcript: { messages: at.messages, generation: 0, sentToModel: 0 },
    events: { events: [], lastSeq: 0 },
    standingApprovals: {},
    queue: [],
    runCount: fork.atRun,
    endRequested: false,
    continuations: 0,
    forkedFrom,
  };
  const newId = await agent.startCarried(fork.newId ?? `conv-${randomUUID()}`, options, { ...carried });
  // The worker checks the fork against the original before anything runs: say its answer here
  // rather than leave an id that is already dead.
  const admission = await agent.admission(newId);
  if ('reason' in admission) throw new Error(`the fork ${newId} was refused: ${admission.reason}`);
  if ('untaken' in admission) {
    log(`no worker has taken ${newId} yet: the worker that does checks it against ${conversationId}`);
  }
  process.stdout.write(
    fork.json
      ? `${JSON.stringify({ conversationId: newId, forkedFrom, messages: at.messages.length })}\n`
      : `${newId}\n`,
  );
  return 0;
}

/**
 * The original's options at that point, as a top-level conversation of its own: a sub-agent's place
 * in its tree is not handed on (a client may not claim one), and `workspace` replaces its workspace.
 */
function forkOptions(recorded: unknown, workspace: string | undefined): ConversationOptionsInput {
  const parsed = ConversationOptionsSchema.safeParse(recorded ?? {});
  if (!parsed.success) {
    throw new Error(`the original's options are not valid now: ${schemaProblems(parsed.error)}`);
  }
  const { ancestors: _ancestors, ...options } = parsed.data;
  return { ...options, ...(workspace !== undefined ? { workspace } : {}) };
}
