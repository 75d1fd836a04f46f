import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import type { Payload, WorkflowExecutionStatusName } from '@temporalio/client';
import { eventsQuery } from '../shared/conversation-api';
import type { AgentEvent } from '../shared/events';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import type { ActivityProgress } from '../shared/tool-run';
import { type ModelTextSource, modelCallKey } from './live-model-text';
import { followRemoteModelText } from './remote-model-text';
import { LiveQueue, ModelTextSeen, takeFirstCall } from './live-text-order';
import { EndedUnansweredError, describeWhileUnreachable, queryWhileRunning } from './query-retry';
import { eventLine } from './event-line';
import { type RetryingModelCall, retryingModelCall } from './retrying-model-call';
import { abortableCall } from './abortable-call';

export type PolledItem =
  | { kind: 'event'; event: AgentEvent }
  | {
      kind: 'progress';
      progress: ActivityProgress;
      activityId: string;
      /** When the activity last heartbeated, in ms since the epoch. */
      heartbeatAt: number;
    }
  | { kind: 'retry'; retry: RetryingModelCall }
  | {
      kind: 'text';
      /** The model call (attempt) it belongs to; see `ModelTextDelta`. */
      call: string;
      offset: number;
      text: string;
      at: number;
    };

export interface PollOptions {
  pollMs?: number;
  /** Text from model activities running in this process, passed on as it arrives instead of at the next heartbeat. */
  liveText?: ModelTextSource;
  /** Stops polling at once, a call to Temporal in flight included; the poll then ends as if still running. */
  signal?: AbortSignal;
  /** How long to go on asking for events once the conversation has ended (see queryWhileRunning). */
  afterEndMs?: number;
}

/** Between two polls; short enough for progress to look live, long enough to cost the server little. */
export const DEFAULT_POLL_MS = 200;

/**
 * Events after `afterSeq` and every change in the heartbeat details of pending activities, until
 * the workflow closes; returns how it closed (EndedUnansweredError when it closed and its events
 * can no longer be read). Events come from the `events` query, progress from
 * describe(); neither adds anything to history. Describe runs after the query, so an activity
 * still pending there has not had its end event recorded yet: progress never follows its tool's end.
 */
export async function* pollConversation(
  handle: WorkflowHandle,
  afterSeq: number,
  { pollMs = DEFAULT_POLL_MS, liveText, signal, afterEndMs }: PollOptions = {},
): AsyncGenerator<PolledItem, WorkflowExecutionStatusName> {
  const rpc = <T>(call: () => Promise<T>) => abortableCall(handle, signal, call);
  const eventsAfter = (after: number): Promise<AgentEvent[]> =>
    queryWhileRunning(handle, () => handle.query(eventsQuery, after), { signal, afterEndMs });
  let seq = afterSeq;
  /** The last heartbeat payload seen of each pending activity: an unchanged one is not decoded again. */
  const lastProgress = new Map<string, Uint8Array>();
  const text = new ModelTextSeen();
  const live = new LiveQueue();
  /** The last model retry told (activity id and attempt), so each failed attempt is told once. */
  let retryTold = '';
  /** Model calls whose text is read from their worker's push endpoint, by call key. */
  const remote = new Map<string, { stop(): void }>();
  const unsubscribe = liveText?.subscribe(handle.workflowId, (delta) => live.push(delta));
  const stop = () => live.interrupt();
  signal?.addEventListener('abort', stop);
  try {
    /** Sub-agents started by a `sessions_spawn` call still running, by that call's id. */
    const subAgents = new Map<string, { handle: WorkflowHandle; seq: number }>();
    /** The sub-agent's events since the last look, as progress of its spawn call. */
    async function* subAgentEvents(toolCallId: string): AsyncGenerator<PolledItem> {
      const subAgent = subAgents.get(toolCallId)!;
      // A child that is gone (or whose worker is busy) simply shows nothing more.
      const events = await rpc(() => subAgent.handle.query(eventsQuery, subAgent.seq)).catch(() => []);
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
      if (signal?.aborted) return 'RUNNING';
      // Text that came before this look at the events follows the events that led to its model call
      // (the call was scheduled before its first token); text that comes while looking may belong
      // to a call the look does not show yet. Either precedes its call's model_response.
      const before = live.drain();
      const events = await eventsAfter(seq);
      const during = live.drain();
      for (const event of events) {
        seq = event.seq;
        if (event.type === 'model_response') yield* text.fromLive(takeFirstCall(before, during));
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
      live.anchor(before);
      yield* text.fromLive(before);
      live.putBack(during);
      for (const toolCallId of subAgents.keys()) yield* subAgentEvents(toolCallId);
      const description = await describeWhileUnreachable(handle, signal);
      if (description.status.name !== 'RUNNING') {
        // Events recorded by the workflow's last task, between the query above and its closing.
        const last = await rpc(() => handle.query(eventsQuery, seq)).catch((error: unknown) => {
          if (signal?.aborted) return [];
          throw new EndedUnansweredError(handle.workflowId, error);
        });
        for (const event of last) yield { kind: 'event', event };
        return description.status.name;
      }
      const pending = description.raw.pendingActivities ?? [];
      const retry = retryingModelCall(pending);
      if (retry && `${retry.activityId}#${retry.attempt}` !== retryTold) {
        retryTold = `${retry.activityId}#${retry.attempt}`;
        yield { kind: 'retry', retry };
      }
      for (const activityId of lastProgress.keys()) {
        if (!pending.some((activity) => activity.activityId === activityId)) lastProgress.delete(activityId);
      }
      for (const [call, follow] of remote) {
        const running = pending.some(
          (activity) =>
            call === modelCallKey(description.runId, activity.activityId ?? '', activity.attempt ?? 1),
        );
        if (!running) {
          follow.stop();
          remote.delete(call);
        }
      }
      for (const activity of pending) {
        const payload = activity.heartbeatDetails?.payloads?.[0];
        if (!payload || !activity.activityId) continue;
        const raw = payload.data ?? new Uint8Array();
        const seen = lastProgress.get(activity.activityId);
        if (seen && Buffer.from(seen).equals(raw)) continue;
        lastProgress.set(activity.activityId, raw);
        const progress = await decodeProgress(handle, payload);
        const heartbeat = activity.lastHeartbeatTime;
        const heartbeatAt = heartbeat
          ? Number(heartbeat.seconds ?? 0) * 1_000 + Math.floor((heartbeat.nanos ?? 0) / 1e6)
          : Date.now();
        if (progress.kind === 'model') {
          const call = modelCallKey(description.runId, activity.activityId, activity.attempt ?? 1);
          if (progress.live && !remote.has(call)) {
            const follow = followRemoteModelText(progress.live, call, handle.workflowId, (delta) =>
              live.push(delta),
            );
            remote.set(call, follow);
          }
          yield* text.fromHeartbeat(call, progress, heartbeatAt);
        }
        yield { kind: 'progress', progress, activityId: activity.activityId, heartbeatAt };
      }
      // Until the next look, live text of calls already placed among the events is passed on as it
      // arrives; the first text of a new call is placed by looking at the events first.
      const nextLook = Date.now() + pollMs;
      for (let left = pollMs; left > 0 && !signal?.aborted; left = nextLook - Date.now()) {
        await live.wait(left);
        if (!live.allAnchored()) break;
        yield* text.fromLive(live.drain());
      }
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    unsubscribe?.();
    for (const follow of remote.values()) follow.stop();
  }
}

/** Heartbeat details as the worker wrote them: through the client's payload codecs (large ones are compressed). */
async function decodeProgress(handle: WorkflowHandle, payload: Payload): Promise<ActivityProgress> {
  let payloads = [payload];
  for (const codec of [...(handle.client.options.dataConverter.payloadCodecs ?? [])].reverse()) {
    payloads = await codec.decode(payloads);
  }
  return defaultPayloadConverter.fromPayload<ActivityProgress>(payloads[0]!);
}

/** One event of a sub-agent as progress of the `sessions_spawn` call that started it. */
function subAgentProgress(toolCallId: string, conversationId: string, event: AgentEvent): ActivityProgress {
  return {
    kind: 'tool',
    toolCallId,
    toolName: SPAWN_TOOL_NAME,
    text: `[${conversationId}] ${eventLine(event) ?? event.type}`,
    details: {
      subagent: conversationId,
      event: event.type,
      // Whole for what a watcher may act on: a sub-agent's approvals can be decided from its parent's watch.
      ...(event.type === 'approval_requested' || event.type === 'approval_decided'
        ? { subagentEvent: event }
        : {}),
    },
  };
}
