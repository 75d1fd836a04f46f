import { allHandlersFinished, condition } from '@temporalio/workflow';
import { compactIfNeeded } from './compaction';
import type { ConversationEntity } from './conversation-entity';
import type { HandOver } from './hand-over';

/**
 * What an idle conversation does next: begin a run, or (having compacted as asked) look again, or
 * end, on `end` or when the idle timeout passed with nothing to do. A hand-over due between two runs
 * is made here, and then this never returns.
 */
export async function betweenRuns(
  self: ConversationEntity,
  handOver: HandOver,
): Promise<'run' | 'compacted' | 'end' | 'idle_timeout'> {
  if (!(await waitForWork(self, handOver))) return 'idle_timeout';
  if (!self.endRequested && handOver.due()) {
    // Between runs: nothing is in flight but handlers, and signals that arrive meanwhile land in `queue`.
    await condition(allHandlersFinished);
    return handOver.now();
  }
  if (!hasRunWork(self) && self.compactionRequests.take()) {
    await compactWhileIdle(self);
    return 'compacted';
  }
  return hasRunWork(self) ? 'run' : 'end';
}

/** Messages or subscription events for a run to take. */
function hasRunWork(self: ConversationEntity): boolean {
  return self.queue.length > 0 || self.rap.hasEvents;
}

/** False when the idle timeout passed with nothing to do. */
async function waitForWork(self: ConversationEntity, handOver: HandOver): Promise<boolean> {
  const hasWork = () =>
    hasRunWork(self) || self.endRequested || handOver.due() || self.compactionRequests.pending;
  const { idleTimeoutMs } = self.options;
  if (idleTimeoutMs === undefined) {
    await condition(hasWork);
    return true;
  }
  return condition(hasWork, idleTimeoutMs);
}

/** A compaction asked for while idle is made now, outside any run. */
async function compactWhileIdle(self: ConversationEntity): Promise<void> {
  const { options, compactionRequests } = self;
  const receipt = await compactIfNeeded(
    {
      conversationId: self.conversationId,
      run: self.runCount,
      transcript: self.transcript,
      events: self.events,
      settings: options.compaction,
      model: options.model,
      ...self.budget.compactionCounting(),
    },
    true,
  );
  compactionRequests.report(receipt, true);
}
