import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import type { Payload, WorkflowExecutionStatusName } from '@temporalio/client';
import { eventsQuery } from '../shared/conversation-api';
import type { AgentEvent } from '../shared/events';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import type { ActivityProgress } from '../shared/tool-run';
import { type ModelTextDelta, type ModelTextSource, modelCallKey } from './live-model-text';
import { renderProgress } from './render-progress';

export type PolledItem =
  | { kind: 'event'; event: AgentEvent }
  | {
      kind: 'progress';
      progress: ActivityProgress;
      activityId: string;
      /** When the activity last heartbeated, in ms since the epoch. */
      heartbeatAt: number;
    }
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
}

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
  { pollMs = DEFAULT_POLL_MS, liveText, signal }: PollOptions = {},
): AsyncGenerator<PolledItem, WorkflowExecutionStatusName> {
  const rpc = <T>(call: () => Promise<T>) => (signal ? handle.client.withAbortSignal(signal, call) : call());
  let seq = afterSeq;
  const lastProgress = new Map<string, string>();
  const text = new ModelTextSeen();
  const live = new LiveQueue();
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
      const events = await rpc(() => handle.query(eventsQuery, seq));
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
      const description = await rpc(() => handle.describe());
      if (description.status.name !== 'RUNNING') {
        // Events recorded by the workflow's last task, between the query above and its closing.
        for (const event of await rpc(() => handle.query(eventsQuery, seq)).catch(() => [])) {
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
        const progress = await decodeProgress(handle, payload);
        const key = JSON.stringify(progress);
        if (lastProgress.get(activity.activityId) === key) continue;
        lastProgress.set(activity.activityId, key);
        const heartbeat = activity.lastHeartbeatTime;
        const heartbeatAt = heartbeat
          ? Number(heartbeat.seconds ?? 0) * 1_000 + Math.floor((heartbeat.nanos ?? 0) / 1e6)
          : Date.now();
        if (progress.kind === 'model') {
          const call = modelCallKey(description.runId, activity.activityId, activity.attempt ?? 1);
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

/** How much of each model call's text has been passed on, so live text and heartbeats never repeat it. */
class ModelTextSeen {
  private readonly seen = new Map<string, number>();

  *fromLive(deltas: ModelTextDelta[]): Generator<PolledItem> {
    for (const delta of deltas) yield* this.pass(delta.call, delta.offset, delta.text, Date.now());
  }

  *fromHeartbeat(
    call: string,
    progress: Extract<ActivityProgress, { kind: 'model' }>,
    at: number,
  ): Generator<PolledItem> {
    const length = progress.textLength ?? progress.text.length;
    yield* this.pass(call, length - progress.text.length, progress.text, at);
  }

  private *pass(call: string, offset: number, text: string, at: number): Generator<PolledItem> {
    const seen = this.seen.get(call) ?? 0;
    const end = offset + text.length;
    if (end <= seen) return;
    const from = Math.max(seen, offset);
    this.seen.set(call, end);
    yield { kind: 'text', call, offset: from, text: text.slice(from - offset), at };
  }
}

/** One model activity, whatever its attempt: the part of a call key before `#`. */
const activityOf = (call: string) => call.slice(0, call.lastIndexOf('#'));

/**
 * Takes out of both lists (the first's deltas came first) those of the oldest model activity:
 * a conversation's model calls run one at a time.
 */
function takeFirstCall(first: ModelTextDelta[], then: ModelTextDelta[]): ModelTextDelta[] {
  const oldest = first[0] ?? then[0];
  if (!oldest) return [];
  const activity = activityOf(oldest.call);
  const taken: ModelTextDelta[] = [];
  for (const list of [first, then]) {
    const rest = list.filter((delta) => activityOf(delta.call) !== activity);
    taken.push(...list.filter((delta) => activityOf(delta.call) === activity));
    list.splice(0, list.length, ...rest);
  }
  return taken;
}

/** Live deltas waiting to be passed on, and a way to sleep until one comes. */
class LiveQueue {
  private deltas: ModelTextDelta[] = [];
  private wake: (() => void) | undefined;
  /** Model activities whose first text came after a look at the events, so their place is known. */
  private readonly anchored = new Set<string>();

  anchor(deltas: ModelTextDelta[]): void {
    for (const delta of deltas) this.anchored.add(activityOf(delta.call));
  }

  /** Deltas taken out too soon, back at the front. */
  putBack(deltas: ModelTextDelta[]): void {
    this.deltas.unshift(...deltas);
  }

  allAnchored(): boolean {
    return this.deltas.every((delta) => this.anchored.has(activityOf(delta.call)));
  }

  push(delta: ModelTextDelta): void {
    this.deltas.push(delta);
    this.wake?.();
  }

  drain(): ModelTextDelta[] {
    const deltas = this.deltas;
    this.deltas = [];
    return deltas;
  }

  /** Ends a wait at once. */
  interrupt(): void {
    this.wake?.();
  }

  /** Resolves after `ms`, or sooner when a delta is waiting. */
  wait(ms: number): Promise<void> {
    if (this.deltas.length) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
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
