import type { AgentClient } from '../client/agent-client';
import { type RunEnd, type RunFinishedEvent, type RunSought, endsRun, learnRun } from '../client/run-end';
import type { PendingApproval } from '../shared/approvals';

/** Where the run that takes one message stands, read at once (nothing waits). */
export type RunStanding =
  /** The conversation has not taken the message yet (no worker has run since it was sent), or remembers it no more. */
  | { state: 'not_taken' }
  /** Taken, waiting for the run in progress to end. */
  | { state: 'queued' }
  /** Its run is in progress, waiting for these approvals (none: working). */
  | { state: 'running'; run: number; pending: PendingApproval[]; updatedAt?: number }
  /** Its run finished. */
  | { state: 'finished'; event: RunFinishedEvent }
  /** The conversation ended (completed, failed, terminated) without finishing the run. */
  | { state: 'ended'; executionStatus: string; failure?: string }
  /** Taken long ago: the events that would say how its run went are no longer kept. */
  | { state: 'forgotten' };

/** How long reading an ended conversation's last events or result may take. */
const ENDED_READ_MS = 15_000;

/**
 * Where the run that takes `messageId` stands, from the conversation's receipt of the message, its
 * events since, and its pending approvals; for an ended conversation, from what is left of its
 * events or its result. Holds nothing between calls.
 */
export async function runStanding(
  agent: AgentClient,
  target: { conversationId: string; messageId: string; afterSeq: number; afterRun: number },
): Promise<RunStanding> {
  const { conversationId, messageId } = target;
  const { executionStatus } = await agent.execution(conversationId);
  if (executionStatus !== 'RUNNING') return endedStanding(agent, target);
  const receipt = await agent.messageReceipt(conversationId, messageId);
  if (!receipt) return { state: 'not_taken' };
  const events = await agent.events(conversationId, receipt.afterSeq);
  let sought: RunSought = { messageId, afterRun: receipt.afterRun };
  let updatedAt: number | undefined;
  for (const event of events) {
    sought = learnRun(sought, event);
    if (endsRun(event, sought)) return { state: 'finished', event };
    if (sought.run !== undefined && event.run === sought.run) updatedAt = event.at;
  }
  const run = sought.run;
  if (run === undefined) {
    // The events after the message's receipt begin later than it: its run's were dropped.
    const gap = events.length > 0 && events[0]!.seq > receipt.afterSeq + 1;
    return gap ? { state: 'forgotten' } : { state: 'queued' };
  }
  const pending = (await agent.pendingApprovals(conversationId)).filter((approval) => approval.run === run);
  return { state: 'running', run, pending, ...(updatedAt !== undefined ? { updatedAt } : {}) };
}

async function endedStanding(
  agent: AgentClient,
  target: { conversationId: string; messageId: string; afterSeq: number; afterRun: number },
): Promise<RunStanding> {
  const stop = AbortSignal.timeout(ENDED_READ_MS);
  const following = agent.followRun(target, { signal: stop });
  let next = await following.next();
  while (!next.done) next = await following.next();
  return standingOfEnd(next.value);
}

/** A followed run's end as a standing. */
export function standingOfEnd(end: RunEnd): RunStanding {
  if (end.how === 'finished') return { state: 'finished', event: end.event };
  if (end.how === 'conversation_ended')
    return {
      state: 'ended',
      executionStatus: end.executionStatus,
      ...(end.failure !== undefined ? { failure: end.failure } : {}),
    };
  return { state: 'forgotten' };
}
