import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import type { Payload, WorkflowExecutionDescription, WorkflowExecutionStatusName } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { eventsQuery } from '../shared/conversation-api';
import type { AgentEvent } from '../shared/events';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import type { ActivityProgress } from '../shared/tool-run';
import { type ModelTextSource, modelCallKey } from './live-model-text';
import { followRemoteModelText } from './remote-model-text';
import { LiveQueue, ModelTextSeen, takeFirstCall } from './live-text-order';
import { EndedUnansweredError, describeWhileUnreachable, queryWhileRunning } from './query-retry';
import { eventLine } from './event-line';
import { MODEL_ACTIVITY_TYPE, type RetryingModelCall, retryingModelCall } from './retrying-model-call';
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
 * A model call seen pending before its first heartbeat (which names its worker's push endpoint) is
 * looked at again this often, for at most SEEK_ENDPOINT_FOR_MS from when it was first seen: its
 * first text need not wait for the next poll. Only describe() is called, which the server answers.
 */
const SEEK_ENDPOINT_EVERY_MS = 20;
const SEEK_ENDPOINT_FOR_MS = 1_000;

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
  const poll = new ConversationPoll(handle, afterSeq, signal, afterEndMs);
  const unsubscribe = liveText?.subscribe(handle.workflowId, (delta) => poll.live.push(delta));
  const stop = () => poll.live.interrupt();
  signal?.addEventListener('abort', stop);
  try {
    for (;;) {
      if (signal?.aborted) return 'RUNNING';
      yield* poll.newEvents();
      yield* poll.subAgentsEvents();
      const description = await describeWhileUnreachable(handle, signal);
      if (description.status.name !== 'RUNNING') {
        yield* poll.lastEvents();
        return description.status.name;
      }
      yield* poll.pendingActivities(description);
      yield* poll.liveTextUntilNextLook(pollMs);
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    unsubscribe?.();
    poll.stopRemoteText();
  }
}

type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** What one poll of a conversation has seen so far, and each step of a look at it. */
class ConversationPoll {
  readonly live = new LiveQueue();
  private seq: number;
  /** The last heartbeat payload seen of each pending activity: an unchanged one is not decoded again. */
  private readonly lastProgress = new Map<string, Uint8Array>();
  private readonly text = new ModelTextSeen();
  /** The last model retry told (activity id and attempt), so each failed attempt is told once. */
  private retryTold = '';
  /** Model calls whose text is read from their worker's push endpoint, by call key. */
  private readonly remote = new Map<string, { stop(): void }>();
  /** Model calls seen pending with no heartbeat yet, by call key: when each was first seen. */
  private readonly awaitingEndpoint = new Map<string, number>();
  /** Sub-agents started by a `sessions_spawn` call still running, by that call's id. */
  private readonly subAgents = new Map<string, { handle: WorkflowHandle; seq: number }>();

  constructor(
    private readonly handle: WorkflowHandle,
    afterSeq: number,
    private readonly signal: AbortSignal | undefined,
    private readonly afterEndMs: number | undefined,
  ) {
    this.seq = afterSeq;
  }

  private rpc<T>(call: () => Promise<T>): Promise<T> {
    return abortableCall(this.handle, this.signal, call);
  }

  /** The events since the last look, with the live text that came before each model call's response. */
  async *newEvents(): AsyncGenerator<PolledItem> {
    const { handle, live, text, signal, afterEndMs } = this;
    // Text that came before this look at the events follows the events that led to its model call
    // (the call was scheduled before its first token); text that comes while looking may belong
    // to a call the look does not show yet. Either precedes its call's model_response.
    const before = live.drain();
    const events = await queryWhileRunning(handle, () => handle.query(eventsQuery, this.seq), {
      signal,
      afterEndMs,
    });
    const during = live.drain();
    for (const event of events) {
      this.seq = event.seq;
      if (event.type === 'model_response') yield* text.fromLive(takeFirstCall(before, during));
      if (event.type === 'subagent_started') {
        this.subAgents.set(event.toolCallId, {
          handle: handle.client.getHandle(event.conversationId),
          seq: 0,
        });
      }
      if (event.type === 'tool_execution_end' && this.subAgents.has(event.toolCallId)) {
        // The sub-agent's last events come before its call's end.
        yield* this.subAgentEvents(event.toolCallId);
        this.subAgents.delete(event.toolCallId);
      }
      yield { kind: 'event', event };
    }
    live.anchor(before);
    yield* text.fromLive(before);
    live.putBack(during);
  }

  /** What each sub-agent still running did since the last look. */
  async *subAgentsEvents(): AsyncGenerator<PolledItem> {
    for (const toolCallId of this.subAgents.keys()) yield* this.subAgentEvents(toolCallId);
  }

  /** The sub-agent's events since the last look, as progress of its spawn call. */
  private async *subAgentEvents(toolCallId: string): AsyncGenerator<PolledItem> {
    const subAgent = this.subAgents.get(toolCallId)!;
    // A child that is gone (or whose worker is busy) simply shows nothing more.
    const events = await this.rpc(() => subAgent.handle.query(eventsQuery, subAgent.seq)).catch(() => []);
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

  /** Events recorded by the workflow's last task, between the last look and its closing. */
  async *lastEvents(): AsyncGenerator<PolledItem> {
    const { handle, signal } = this;
    const last = await this.rpc(() => handle.query(eventsQuery, this.seq)).catch((error: unknown) => {
      if (signal?.aborted) return [];
      throw new EndedUnansweredError(handle.workflowId, error);
    });
    for (const event of last) yield { kind: 'event', event };
  }

  /** A model call being tried again, and every change in the heartbeat details of pending activities. */
  async *pendingActivities(description: WorkflowExecutionDescription): AsyncGenerator<PolledItem> {
    const pending = description.raw.pendingActivities ?? [];
    const retry = retryingModelCall(pending);
    if (retry && `${retry.activityId}#${retry.attempt}` !== this.retryTold) {
      this.retryTold = `${retry.activityId}#${retry.attempt}`;
      yield { kind: 'retry', retry };
    }
    this.forgetEnded(description.runId, pending);
    this.noteAwaitingEndpoint(description.runId, pending);
    for (const activity of pending) {
      const payload = activity.heartbeatDetails?.payloads?.[0];
      if (!payload || !activity.activityId) continue;
      const raw = payload.data ?? new Uint8Array();
      const seen = this.lastProgress.get(activity.activityId);
      if (seen && Buffer.from(seen).equals(raw)) continue;
      this.lastProgress.set(activity.activityId, raw);
      const progress = await decodeProgress(this.handle, payload);
      const heartbeat = activity.lastHeartbeatTime;
      const heartbeatAt = heartbeat
        ? Number(heartbeat.seconds ?? 0) * 1_000 + Math.floor((heartbeat.nanos ?? 0) / 1e6)
        : Date.now();
      if (progress.kind === 'model') {
        const call = modelCallKey(description.runId, activity.activityId, activity.attempt ?? 1);
        this.followRemoteText(call, progress);
        yield* this.text.fromHeartbeat(call, progress, heartbeatAt);
      }
      yield { kind: 'progress', progress, activityId: activity.activityId, heartbeatAt };
    }
  }

  /** Notes the model calls pending without a heartbeat yet (and forgets the others). */
  private noteAwaitingEndpoint(runId: string, pending: PendingActivity[]): void {
    const now = Date.now();
    const awaiting = new Set<string>();
    for (const activity of pending) {
      if (activity.activityType?.name !== MODEL_ACTIVITY_TYPE || activity.heartbeatDetails?.payloads?.length)
        continue;
      const call = modelCallKey(runId, activity.activityId ?? '', activity.attempt ?? 1);
      awaiting.add(call);
      if (!this.awaitingEndpoint.has(call)) this.awaitingEndpoint.set(call, now);
    }
    for (const call of this.awaitingEndpoint.keys())
      if (!awaiting.has(call)) this.awaitingEndpoint.delete(call);
  }

  /** Whether a model call seen pending without a heartbeat is still worth looking at again soon. */
  private seekingEndpoint(): boolean {
    const now = Date.now();
    for (const since of this.awaitingEndpoint.values()) if (now - since < SEEK_ENDPOINT_FOR_MS) return true;
    return false;
  }

  /** Forgets the progress of activities no longer pending, and stops reading text of model calls that ended. */
  private forgetEnded(runId: string, pending: PendingActivity[]): void {
    for (const activityId of this.lastProgress.keys()) {
      if (!pending.some((activity) => activity.activityId === activityId))
        this.lastProgress.delete(activityId);
    }
    for (const [call, follow] of this.remote) {
      const running = pending.some(
        (activity) => call === modelCallKey(runId, activity.activityId ?? '', activity.attempt ?? 1),
      );
      if (!running) {
        follow.stop();
        this.remote.delete(call);
      }
    }
  }

  /** Reads a model call's text from its worker's push endpoint, once the heartbeat names one. */
  private followRemoteText(call: string, progress: Extract<ActivityProgress, { kind: 'model' }>): void {
    if (!progress.live || this.remote.has(call)) return;
    const endpoint = {
      url: progress.live,
      ...(progress.livePin !== undefined ? { pin: progress.livePin } : {}),
    };
    const follow = followRemoteModelText(endpoint, call, this.handle.workflowId, (delta) =>
      this.live.push(delta),
    );
    this.remote.set(call, follow);
  }

  /**
   * Until the next look, live text of calls already placed among the events is passed on as it
   * arrives; the first text of a new call is placed by looking at the events first.
   */
  async *liveTextUntilNextLook(pollMs: number): AsyncGenerator<PolledItem> {
    const { live, signal } = this;
    const nextLook = Date.now() + pollMs;
    for (let left = pollMs; left > 0 && !signal?.aborted; left = nextLook - Date.now()) {
      const seeking = this.seekingEndpoint();
      await live.wait(seeking ? Math.min(left, SEEK_ENDPOINT_EVERY_MS) : left);
      if (!live.allAnchored()) break;
      yield* this.text.fromLive(live.drain());
      if (seeking && !signal?.aborted) yield* this.seekEndpoint();
    }
  }

  /** Looks at the pending activities again, for the heartbeat of a model call that had none. */
  private async *seekEndpoint(): AsyncGenerator<PolledItem> {
    const description = await describeWhileUnreachable(this.handle, this.signal);
    if (description.status.name !== 'RUNNING') return;
    yield* this.pendingActivities(description);
  }

  stopRemoteText(): void {
    for (const follow of this.remote.values()) follow.stop();
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
