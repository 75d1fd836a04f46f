import { isCancellation } from '@temporalio/workflow';
import type { AgentEvent, RunFinishedOutcome } from '../shared/events';
import type { ConversationEntity } from './conversation-entity';
import type { HandOver } from './hand-over';
import type { PausedRun, RunContext } from './run-context';
import type { RunControl } from './run-control';
import { runTurnLoop } from './turn-loop';

/**
 * One run of the conversation, in a scope steer and abort reach: the turn loop over the messages
 * queued so far, or the run the previous execution paused between two turns (`resumed`). A run
 * paused for a hand-over is handed over here, and then this never returns. Returns how the run
 * finished, unless it ended without finishing (an abort).
 */
export async function oneRun(
  self: ConversationEntity,
  handOver: HandOver,
  resumed: PausedRun | undefined,
): Promise<FinishedRun | undefined> {
  const control = self.beginRun(resumed !== undefined);
  // A resumed run takes no new messages: they wait for the next run, as they would have.
  const messages = resumed ? [] : self.queue.splice(0);
  const seqBefore = self.events.lastSeq;
  let paused: PausedRun | undefined;
  try {
    paused = await control.scope.run(() =>
      runTurnLoop(runContext(self, control, handOver), messages, resumed),
    );
  } catch (error) {
    // The loop turns an abort into an `aborted` event; a cancellation reaching here is the workflow's own.
    if (!isCancellation(error) || !control.aborted) throw error;
  } finally {
    self.runLeft();
  }
  if (paused) return handOver.now(paused);
  self.runEnded(control);
  return lastFinished(self.events.after(seqBefore));
}

/** How a run finished and its answer: what a sub-agent's parent reads of the conversation's last run. */
export interface FinishedRun {
  outcome?: RunFinishedOutcome;
  answer?: string;
  /** Why the provider refused, when the outcome is `refused` and it said. */
  refusal?: string;
}

/** What a run works with: the conversation's state, the worker's tools, and its own control. */
function runContext(self: ConversationEntity, control: RunControl, handOver: HandOver): RunContext {
  const { run } = control;
  return {
    conversationId: self.conversationId,
    run,
    options: self.options,
    transcript: self.transcript,
    events: self.events,
    tools: () => self.workerTools(run),
    defaultPrompts: self.defaultPrompts,
    approvals: self.approvals,
    control,
    compactionRequests: self.compactionRequests,
    budget: self.budget,
    rap: self.rap,
    clientCalls: self.clientCalls,
    notify: self.notify,
    historyIsLong: handOver.historyIsLong,
  };
}

/** The last `run_finished` among a run's events, if it has one. */
function lastFinished(events: AgentEvent[]): FinishedRun | undefined {
  let finished: FinishedRun | undefined;
  for (const event of events) {
    if (event.type === 'run_finished') {
      finished = {
        outcome: event.outcome,
        answer: event.answer,
        ...(event.refusal !== undefined ? { refusal: event.refusal } : {}),
      };
    }
  }
  return finished;
}
