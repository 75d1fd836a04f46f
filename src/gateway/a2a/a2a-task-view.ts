import type { A2AMessageOut, A2ATask, A2ATaskState } from '../../shared/a2a';
import type { PendingApproval } from '../../shared/approvals';
import type { AgentEvent } from '../../shared/events';
import { type RunSought, endsRun, learnRun } from '../../client/run-end';
import {
  type TaskRef,
  answerArtifact,
  approvalParts,
  finalStatusOf,
  statusOf,
} from '../../shared/a2a-task-parts';

type RunFinished = Extract<AgentEvent, { type: 'run_finished' }>;

/** What Temporal holds of a task, read in one go: everything its state is made from. */
export interface TaskFacts {
  ref: TaskRef;
  /** Where the conversation stood when it took the task's message. */
  receipt: { afterSeq: number; afterRun: number };
  /** The conversation's events after `receipt.afterSeq`, oldest first. */
  events: readonly AgentEvent[];
  /** The approvals the conversation's run in progress waits for. */
  pending: readonly PendingApproval[];
  /** The conversation has ended (or is closed): a message not yet taken by a run never will be. */
  ended: boolean;
  /** When the facts were read, in ms since the epoch: the time of a state no event stamps. */
  now: number;
  /** The task's messages (the caller's, the answer), oldest first, when read. */
  history?: A2AMessageOut[];
}

/** A task as it stands, with the run that took its message and the newest event it was made from. */
export interface TaskView {
  task: A2ATask;
  state: A2ATaskState;
  run?: number;
  finished?: RunFinished;
  /** The newest event read: a stream goes on after it. */
  lastSeq: number;
  /** Runs numbered up to here did not take the task's message. */
  afterRun: number;
}

/** The run that took the message (or that it steered), its events, and its end, among `events`. */
export function runOf(
  events: readonly AgentEvent[],
  messageId: string,
  afterRun: number,
): { run?: number; finished?: RunFinished; runEvents: AgentEvent[] } {
  let sought: RunSought = { messageId, afterRun };
  for (const event of events) {
    sought = learnRun(sought, event);
    if (endsRun(event, sought)) {
      const run = event.run;
      return { run, finished: event, runEvents: events.filter((each) => each.run === run) };
    }
  }
  const { run } = sought;
  return run === undefined
    ? { runEvents: [] }
    : { run, runEvents: events.filter((each) => each.run === run) };
}

/**
 * The task's state, made from the conversation's events alone: submitted until a run takes its
 * message, working while that run goes on, input-required while it waits for a decision, and at
 * its end completed (answered), canceled (aborted) or failed (any other end, with the reason).
 */
export function taskView(facts: TaskFacts): TaskView {
  const { ref, receipt, events, pending } = facts;
  const lastSeq = events.reduce((newest, event) => Math.max(newest, event.seq), receipt.afterSeq);
  const { run, finished, runEvents } = runOf(events, ref.messageId, receipt.afterRun);
  const task = (state: A2ATaskState, status: A2ATask['status'], extra: Partial<A2ATask> = {}): TaskView => ({
    task: {
      id: ref.taskId,
      contextId: ref.contextId,
      status,
      ...extra,
      ...(facts.history?.length ? { history: facts.history } : {}),
    },
    state,
    ...(run !== undefined ? { run } : {}),
    ...(finished ? { finished } : {}),
    lastSeq,
    afterRun: receipt.afterRun,
  });
  if (finished) {
    const status = finalStatusOf(ref, finished, runEvents);
    const answer = answerArtifact(finished);
    return task(status.state, status, answer ? { artifacts: [answer] } : {});
  }
  const at = runEvents.at(-1)?.at ?? facts.now;
  if (run === undefined) {
    if (!facts.ended) return task('TASK_STATE_SUBMITTED', statusOf(ref, 'TASK_STATE_SUBMITTED', at));
    const parts = [{ text: 'the conversation ended before a run took the message', mediaType: 'text/plain' }];
    return task('TASK_STATE_FAILED', statusOf(ref, 'TASK_STATE_FAILED', facts.now, { key: 'ended', parts }));
  }
  if (facts.ended) {
    const parts = [{ text: 'the conversation ended before the run finished', mediaType: 'text/plain' }];
    return task('TASK_STATE_FAILED', statusOf(ref, 'TASK_STATE_FAILED', facts.now, { key: 'ended', parts }));
  }
  const waiting = pending.filter((approval) => approval.run === run);
  if (waiting.length > 0) {
    const key = `wait-${lastSeq}`;
    const status = statusOf(ref, 'TASK_STATE_INPUT_REQUIRED', at, { key, parts: approvalParts(waiting) });
    return task('TASK_STATE_INPUT_REQUIRED', status);
  }
  return task('TASK_STATE_WORKING', statusOf(ref, 'TASK_STATE_WORKING', at));
}
