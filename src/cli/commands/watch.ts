import type { AgentClient, RunToFollow } from '../../client/agent-client';
import { ConversationEndedError } from '../../shared/conversation-errors';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { noWorkerFor } from '../worker-presence';
import { followRun, reportRunEnd } from '../terminal/follow-run';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';

export interface WatchArgs {
  conversationId: string;
  json: boolean;
  /** Every run until the conversation ends, instead of one run. */
  untilEnded: boolean;
}

export function parseWatchArgs(args: string[]): WatchArgs {
  const { values, positionals } = parseCommandArgs('watch', {
    args,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      'until-ended': { type: 'boolean', default: false },
    },
  });
  const { ID } = namedPositionals('watch', positionals, ['ID'] as const);
  return { conversationId: conversationIdArg(ID), json: values.json, untilEnded: values['until-ended'] };
}

export interface WatchStart {
  /** The run followed: the one in progress, or the next one when the conversation is idle. */
  run: number;
  /** Events after this are shown: the whole run in progress, including approvals asked before watching began. */
  afterSeq: number;
  idle: boolean;
}

async function watchStart(agent: AgentClient, conversationId: string): Promise<WatchStart> {
  const status = await agent.status(conversationId);
  if (status.status !== 'running') return { run: status.runCount + 1, afterSeq: status.lastSeq, idle: true };
  const firstOfRun = (await agent.events(conversationId, 0)).find((event) => event.run === status.runCount);
  return { run: status.runCount, afterSeq: firstOfRun ? firstOfRun.seq - 1 : status.lastSeq, idle: false };
}

/**
 * The run a watch follows. Watching an idle conversation, the first run to finish is the one
 * followed: the status read at the start can be behind (a run started, or one resumed by a worker
 * that took over after a crash), and waiting for a later run number would then miss the end of the
 * run actually in progress.
 */
export function runWatched(conversationId: string, start: WatchStart): RunToFollow {
  return { conversationId, afterSeq: start.afterSeq, ...(start.idle ? {} : { run: start.run }) };
}

/**
 * `watch`: events and tool progress of the run in progress (from its start) or, when the
 * conversation is idle, of the next run, until that run finishes; with --until-ended, of every run
 * until the conversation ends.
 */
export async function watchCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const watch = parseWatchArgs(args);
  const { agent, client, settings } = await connectAgent(cleanups, { startServer: false });
  const { executionStatus, taskQueue } = await agent.execution(watch.conversationId);
  if (executionStatus !== 'RUNNING') {
    throw new ConversationEndedError(watch.conversationId, executionStatus.toLowerCase());
  }
  // Watching waits for a worker (one may be starting); the person is told rather than left waiting blind.
  if (await noWorkerFor(client, settings.namespace, taskQueue)) {
    log(
      `no worker polls task queue ${taskQueue}, where conversation ${watch.conversationId} runs: waiting until one does (durable-agent worker)`,
    );
  }
  const start = await watchStart(agent, watch.conversationId);
  log(
    start.idle
      ? `conversation ${watch.conversationId} is idle; waiting for its next run`
      : `watching run ${start.run} of conversation ${watch.conversationId}`,
  );
  const last = await followRun({
    agent,
    run: runWatched(watch.conversationId, start),
    untilEnded: watch.untilEnded,
    json: watch.json,
  });
  if (watch.untilEnded) {
    if (!watch.json) log(`conversation ${watch.conversationId} has ended`);
    return 0;
  }
  return reportRunEnd(watch.conversationId, last, watch.json);
}
