import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { eventsQuery } from '../shared/conversation-api';
import type { AgentEvent } from '../shared/events';
import type { ActivityProgress } from '../shared/tool-run';

export type PolledItem =
  | { kind: 'event'; event: AgentEvent }
  | {
      kind: 'progress';
      progress: ActivityProgress;
      activityId: string;
      /** When the activity last heartbeated, in ms since the epoch. */
      heartbeatAt: number;
    };

/** Between two polls; short enough for progress to look live, long enough to cost the server little. */
export const DEFAULT_POLL_MS = 200;

/**
 * Events after `afterSeq` and every change in the heartbeat details of pending activities, until
 * the workflow closes; returns how it closed. Events come from the `events` query, progress from
 * describe(); neither adds anything to history. Describe runs after the query, so an activity
 * still pending there has not had its end event recorded yet: progress never follows its tool's end.
 */
export async function* pollConversation(
  handle: WorkflowHandle,
  afterSeq: number,
  pollMs: number = DEFAULT_POLL_MS,
): AsyncGenerator<PolledItem, WorkflowExecutionStatusName> {
  let seq = afterSeq;
  const lastProgress = new Map<string, string>();
  for (;;) {
    for (const event of await handle.query(eventsQuery, seq)) {
      seq = event.seq;
      yield { kind: 'event', event };
    }
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') {
      // Events recorded by the workflow's last task, between the query above and its closing.
      for (const event of await handle.query(eventsQuery, seq).catch(() => [])) {
        yield { kind: 'event', event };
      }
      return description.status.name;
    }
    const pending = description.raw.pendingActivities ?? [];
    for (const activityId of lastProgress.keys()) {
      if (!pending.some((activity) => activity.activityId === activityId)) lastProgress.delete(activityId);
    }
    for (const activity of pending) {
      const payload = activity.heartbeatDetails?.payloads?.[0];
      if (!payload || !activity.activityId) continue;
      const progress = defaultPayloadConverter.fromPayload<ActivityProgress>(payload);
      const key = JSON.stringify(progress);
      if (lastProgress.get(activity.activityId) === key) continue;
      lastProgress.set(activity.activityId, key);
      const heartbeat = activity.lastHeartbeatTime;
      const heartbeatAt = heartbeat
        ? Number(heartbeat.seconds ?? 0) * 1_000 + Math.floor((heartbeat.nanos ?? 0) / 1e6)
        : Date.now();
      yield { kind: 'progress', progress, activityId: activity.activityId, heartbeatAt };
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
