import type { AgentClient } from '../../client/agent-client';
import { CURSOR_KEY, type StreamCursor, encodeCursor } from './a2a-cursor';
import { type TaskRef, statusOf } from '../../shared/a2a-task-parts';
import { type TaskUpdate, TaskUpdates, needsPending } from './a2a-task-updates';

/** Where following a task begins, and what ends it early. */
export interface FollowFrom {
  ref: TaskRef;
  afterRun: number;
  cursor: StreamCursor;
  signal: AbortSignal;
  pollMs?: number | undefined;
}

/**
 * The task's updates after `cursor`, read from the conversation (its events, and the text and
 * progress of what runs now) until the task ends or waits for its caller (that update included),
 * the conversation ends (a `failed` update), or `signal` stops it. Nothing is kept here: another
 * gateway given the same cursor yields the same updates.
 */
export async function* followTask(agent: AgentClient, from: FollowFrom): AsyncGenerator<TaskUpdate, void> {
  const { ref, cursor, signal } = from;
  const updates = new TaskUpdates(ref, { afterRun: from.afterRun, cursor });
  const following = agent.followRun(
    {
      conversationId: ref.contextId,
      afterSeq: cursor.seq,
      messageId: ref.messageId,
      afterRun: from.afterRun,
      ...(cursor.run !== undefined ? { run: cursor.run } : {}),
    },
    { signal, ...(from.pollMs ? { pollMs: from.pollMs } : {}) },
  );
  let next = await following.next();
  while (!next.done) {
    const event = next.value;
    const pending = needsPending(event) ? await agent.pendingApprovals(ref.contextId) : [];
    for (const update of updates.updatesFor(event, pending)) {
      yield update;
      if (update.closes) {
        await following.return(undefined as never);
        return;
      }
    }
    next = await following.next();
  }
  const end = next.value;
  if (end.how === 'finished') {
    // Made from the workflow's result (the conversation ended with this run), so not yielded above.
    if (end.from === 'result') for (const update of updates.updatesFor(end.event)) yield update;
    return;
  }
  if (end.how === 'conversation_ended') {
    const text = `the conversation ended (${end.executionStatus.toLowerCase()}${end.failure ? `: ${end.failure}` : ''}) before the task did`;
    const status = statusOf(ref, 'TASK_STATE_FAILED', Date.now(), {
      key: 'ended',
      parts: [{ text, mediaType: 'text/plain' }],
    });
    const at = encodeCursor(cursor);
    yield {
      response: {
        statusUpdate: {
          taskId: ref.taskId,
          contextId: ref.contextId,
          status,
          metadata: { [CURSOR_KEY]: at },
        },
      },
      cursor: at,
      closes: true,
    };
  }
}
