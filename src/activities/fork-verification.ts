import { isDeepStrictEqual } from 'node:util';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { fetchConversationHistories } from '../history/conversation-history';
import { decodeHistoryPayloads } from '../history/decode-history-payloads';
import { transcriptAtRun } from '../history/transcript-at-run';
import type { ForkedFrom } from '../shared/conversation-api';
import type { CarriedPart } from '../shared/worker-floors';

/** Whether a run's carried state is a true fork of a conversation this server holds. */
export type ForkVerdict = { verified: true } | { verified: false; reason: string };

/** A fork carries a transcript and where it came from; everything else starts afresh. */
interface ForkCarried {
  transcript?: { messages?: unknown; generation?: unknown; sentToModel?: unknown };
  events?: { events?: unknown[]; lastSeq?: unknown };
  standingApprovals?: Record<string, unknown>;
  queue?: unknown[];
  runCount?: unknown;
  endRequested?: unknown;
  continuations?: unknown;
  forkedFrom?: ForkedFrom;
  [part: string]: unknown;
}

const FORK_PARTS: ReadonlySet<string> = new Set<CarriedPart>([
  'transcript',
  'events',
  'standingApprovals',
  'queue',
  'runCount',
  'endRequested',
  'continuations',
  'forkedFrom',
]);

/**
 * Checks the carried state a client started a run with against the original's history: the worker
 * reads the run's own start event (what the workflow was really given), rebuilds the original's
 * transcript at the end of the named run from the original's history on this server, and accepts
 * only an exact match with nothing else carried. So `fork` needs no trust in the client, while a
 * forged transcript (or one from an exported file of another server) is refused.
 */
export async function verifyForkFromHistory(): Promise<ForkVerdict> {
  const { info, client } = Context.current();
  const execution = info.workflowExecution;
  if (!execution) return { verified: false, reason: 'the run to verify is not known' };
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: info.workflowNamespace ?? client.options.namespace,
    execution,
    maximumPageSize: 1,
  });
  if (!history) return { verified: false, reason: 'the run has no history to verify' };
  await decodeHistoryPayloads(history, client.options.loadedDataConverter.payloadCodecs);
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = payload
    ? (client.options.loadedDataConverter.payloadConverter.fromPayload(payload) as {
        carried?: ForkCarried;
      })
    : undefined;
  return verifyFork(client, input?.carried);
}

/** The checks of `verifyForkFromHistory` on carried state already read. */
export async function verifyFork(client: Client, carried: ForkCarried | undefined): Promise<ForkVerdict> {
  const forkedFrom = carried?.forkedFrom;
  if (!carried || !forkedFrom) return { verified: false, reason: 'the run carries no fork' };
  const extra = Object.keys(carried).filter((part) => carried[part] !== undefined && !FORK_PARTS.has(part));
  const fresh =
    extra.length === 0 &&
    (carried.events?.events?.length ?? 0) === 0 &&
    Object.keys(carried.standingApprovals ?? {}).length === 0 &&
    (carried.queue?.length ?? 0) === 0 &&
    carried.endRequested === false &&
    carried.continuations === 0 &&
    carried.transcript?.generation === 0 &&
    carried.transcript?.sentToModel === 0 &&
    carried.runCount === forkedFrom.atRun;
  if (!fresh) {
    return {
      verified: false,
      reason: `a fork carries only the original's transcript and its run count${extra.length ? `, not ${extra.join(', ')}` : ''}`,
    };
  }
  let original;
  try {
    const executions = await fetchConversationHistories(client, forkedFrom.conversationId);
    for (const { history } of executions) {
      await decodeHistoryPayloads(history, client.options.loadedDataConverter.payloadCodecs);
    }
    original = transcriptAtRun(
      forkedFrom.conversationId,
      executions,
      forkedFrom.atRun,
      client.options.loadedDataConverter.payloadConverter,
    );
  } catch (error) {
    return {
      verified: false,
      reason: `the fork of ${forkedFrom.conversationId} at run ${forkedFrom.atRun} cannot be checked against the original on this server (${(error as Error).message}); a fork of an exported history is accepted only by a worker whose AGENT_ACCEPT_CARRIED allows carried state`,
    };
  }
  if (forkedFrom.runId !== undefined && forkedFrom.runId !== original.runId) {
    return {
      verified: false,
      reason: `run ${forkedFrom.atRun} of ${forkedFrom.conversationId} ended in execution ${original.runId}, not ${forkedFrom.runId}`,
    };
  }
  if (!isDeepStrictEqual(carried.transcript?.messages, original.messages)) {
    return {
      verified: false,
      reason: `the fork's transcript is not ${forkedFrom.conversationId}'s transcript at the end of run ${forkedFrom.atRun}`,
    };
  }
  return { verified: true };
}
