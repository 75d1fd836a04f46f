import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { eventsQuery } from '../shared/conversation-api';
import type { AgentEvent } from '../shared/events';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import type { ActivityProgress } from '../shared/tool-run';
import { renderProgress } from './render-progress';

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
  /** Sub-agents started by a `sessions_spawn` call still running, by that call's id. */
  const subAgents = new Map<string, { handle: WorkflowHandle; seq: number }>();
  /** The sub-agent's events since the last look, as progress of its spawn call. */
  async function* subAgentEvents(toolCallId: string): AsyncGenerator<PolledItem> {
    const subAgent = subAgents.get(toolCallId)!;
    // A child that is gone (or whose worker is busy) simply shows nothing more.
    const events = await subAgent.handle.query(eventsQuery, subAgent.seq).catch(() => []);
    for (const event of events) {
      subAgent.seq = event.seq;
      yield {
        kind: 'progress',
        progress: subAgentProgress(toolCallId, subAgent.handle.workflowId, event),
        activityId: `subagent:${subAgent.handle.workflowId}`,
        heartbeatAt: event.at,
      };
    }
  }
  for (;;) {
    for (const event of await handle.query(eventsQuery, seq)) {
      seq = event.seq;
      if (event.type === 'subagent_started') {
        subAgents.set(event.toolCallId, { handle: handle.client.getHandle(event.conversationId), seq: 0 });
      }
      if (event.type === 'tool_execution_end' && subAgents.has(event.toolCallId)) {
        // The sub-agent's last events come before its call's end.
        yield* subAgentEvents(event.toolCallId);
        subAgents.delete(event.toolCallId);
      }
      yield { kind: 'event', event };
    }
    for (const toolCallId of subAgents.keys()) yield* subAgentEvents(toolCallId);
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

/** One event of a sub-agent as progress of the `sessions_spawn` call that started it. */
function subAgentProgress(toolCallId: string, conversationId: string, event: AgentEvent): ActivityProgress {
  return {
    kind: 'tool',
    toolCallId,
    toolName: SPAWN_TOOL_NAME,
    text: `[${conversationId}] ${renderProgress(event) ?? event.type}`,
    details: { subagent: conversationId, event: event.type },
  };
}
