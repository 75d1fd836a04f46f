import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;
const Cause = temporal.api.enums.v1.WorkflowTaskFailedCause;
/** Workflow task failures that come from the workflow code (not from the server, such as an unhandled command). */
const WORKFLOW_CODE_FAILURES = new Set<number>([
  Cause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
  Cause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR,
]);

/** An event's server time in ms (with the nanoseconds). */
export function eventTimeMs(event: HistoryEvent): number {
  const time = event.eventTime;
  if (!time) return 0;
  const seconds = time.seconds;
  const whole =
    typeof seconds === 'number' ? seconds : seconds && typeof seconds === 'object' ? seconds.toNumber() : 0;
  return whole * 1_000 + (time.nanos ?? 0) / 1e6;
}

/** Size of a history as the server keeps it: the encoded protobuf. */
export function historyBytes(history: temporal.api.history.v1.IHistory): number {
  return temporal.api.history.v1.History.encode(history).finish().length;
}

/**
 * Events and encoded bytes of one run's history, read in pages of 100 events: a page of the peer's
 * events can pass gRPC's 4 MB message limit. Pages encode to the bytes of the whole history.
 */
export async function measureRun(
  client: Client,
  workflowId: string,
  runId: string,
): Promise<{ events: number; bytes: number }> {
  let events = 0;
  let bytes = 0;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      nextPageToken,
      maximumPageSize: 100,
    });
    events += page.history?.events?.length ?? 0;
    bytes += page.history ? historyBytes(page.history) : 0;
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { events, bytes };
}

/**
 * Follows a workflow's history as it grows, with the server's long poll (no polling interval, so
 * an event is seen as soon as the server has it), across continue-as-new.
 */
export class HistoryFollower {
  private token: Uint8Array | undefined;
  private readonly buffered: HistoryEvent[] = [];
  /** Activity type of every scheduled activity, by its scheduled event id (of the current run). */
  private readonly activityTypes = new Map<number, string>();
  /** Runs this follower has left through continue-as-new. */
  readonly runIds: string[] = [];

  private constructor(
    private readonly client: Client,
    readonly workflowId: string,
    private runId: string,
  ) {}

  /** Starts after the events already in history (they are skipped). */
  static async atEnd(client: Client, workflowId: string): Promise<HistoryFollower> {
    const description = await client.workflow.getHandle(workflowId).describe();
    const follower = new HistoryFollower(client, workflowId, description.runId);
    // Page through what is there without waiting, keeping only the token.
    for (;;) {
      const response = await follower.fetch(false);
      for (const event of response.events) follower.note(event);
      if (!follower.token) break;
      if (response.events.length === 0) break;
    }
    return follower;
  }

  activityType(scheduledEventId: number | Long | null | undefined): string | undefined {
    return this.activityTypes.get(Number(scheduledEventId));
  }

  get currentRunId(): string {
    return this.runId;
  }

  /** One page; a long poll (`wait`) is cancelled at `deadline`, so none outlives its caller. */
  private async fetch(wait: boolean, deadline = Date.now() + 60_000): Promise<{ events: HistoryEvent[] }> {
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    const response = await this.client.withAbortSignal(signal, () =>
      this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.client.options.namespace,
        execution: { workflowId: this.workflowId, runId: this.runId },
        nextPageToken: this.token,
        waitNewEvent: wait,
        maximumPageSize: 1_000,
      }),
    );
    this.token = response.nextPageToken?.length ? response.nextPageToken : undefined;
    return { events: response.history?.events ?? [] };
  }

  private note(event: HistoryEvent): void {
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      this.activityTypes.set(
        Number(event.eventId),
        event.activityTaskScheduledEventAttributes?.activityType?.name ?? '',
      );
    }
    const continued = event.workflowExecutionContinuedAsNewEventAttributes;
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW && continued) {
      this.runIds.push(this.runId);
      this.runId = continued.newExecutionRunId ?? this.runId;
      this.token = undefined;
      this.activityTypes.clear();
    }
  }

  /** The next event, waiting for the server to have one. */
  async nextEvent(deadline: number): Promise<HistoryEvent> {
    const late = () => new Error(`no new event in the history of ${this.workflowId} in time`);
    while (this.buffered.length === 0) {
      if (Date.now() >= deadline) throw late();
      const { events } = await this.fetch(true, deadline).catch((error: unknown) => {
        // The long poll is cancelled at the deadline.
        throw Date.now() >= deadline ? late() : error;
      });
      this.buffered.push(...events);
    }
    const event = this.buffered.shift()!;
    this.note(event);
    return event;
  }

  /**
   * Consumes events until the end of a turn: the first workflow task completed after `modelCalls`
   * completions of the activity `modelActivity`. Returns the turn's events (the end included).
   */
  async waitForTurnEnd(
    modelActivity: string,
    modelCalls: number,
    timeoutMs = 60_000,
  ): Promise<HistoryEvent[]> {
    const deadline = Date.now() + timeoutMs;
    const events: HistoryEvent[] = [];
    let completed = 0;
    for (;;) {
      const event = await this.nextEvent(deadline);
      events.push(event);
      if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
        const type = this.activityType(event.activityTaskCompletedEventAttributes?.scheduledEventId);
        if (type === modelActivity) completed++;
      }
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED && completed >= modelCalls) {
        return events;
      }
      const failed = event.workflowTaskFailedEventAttributes;
      if (failed && WORKFLOW_CODE_FAILURES.has(failed.cause ?? 0)) {
        // Temporal retries such a task for ever: the stack under test has a bug.
        throw new Error(`a workflow task of ${this.workflowId} failed: ${failed.failure?.message}`);
      }
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED) {
        throw new Error(`workflow ${this.workflowId} failed`);
      }
    }
  }
}

type Long = { toNumber(): number };

/** Where the time of a turn went, from its events' server timestamps (ms). */
export interface TurnBreakdown {
  /** Workflow tasks: scheduled to started (waiting for a worker), started to completed (running workflow code). */
  workflowTasks: number;
  workflowTaskQueueMs: number;
  workflowTaskRunMs: number;
  /** Activities by type: scheduled to started, started to closed. */
  activities: Record<string, { count: number; queueMs: number; runMs: number }>;
  /** The user's message recorded (signal event) to the last event: the turn as the server saw it. */
  signalToEndMs?: number;
}

export function breakdown(
  events: HistoryEvent[],
  typeOf: (scheduledEventId: number) => string | undefined,
): TurnBreakdown {
  const times = new Map<number, number>();
  const scheduledType = new Map<number, string>();
  const started = new Map<number, number>();
  const result: TurnBreakdown = {
    workflowTasks: 0,
    workflowTaskQueueMs: 0,
    workflowTaskRunMs: 0,
    activities: {},
  };
  for (const event of events) {
    const id = Number(event.eventId);
    const at = eventTimeMs(event);
    times.set(id, at);
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        result.signalToEndMs ??= -at;
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED: {
        const scheduledAt = times.get(Number(event.workflowTaskStartedEventAttributes?.scheduledEventId));
        if (scheduledAt !== undefined) result.workflowTaskQueueMs += at - scheduledAt;
        break;
      }
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED: {
        const startedAt = times.get(Number(event.workflowTaskCompletedEventAttributes?.startedEventId));
        if (startedAt !== undefined) {
          result.workflowTasks++;
          result.workflowTaskRunMs += at - startedAt;
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        scheduledType.set(id, event.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const scheduledId = Number(event.activityTaskStartedEventAttributes?.scheduledEventId);
        started.set(scheduledId, at);
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: {
        const attributes =
          event.activityTaskCompletedEventAttributes ??
          event.activityTaskFailedEventAttributes ??
          event.activityTaskCanceledEventAttributes;
        const scheduledId = Number(attributes?.scheduledEventId);
        const type = scheduledType.get(scheduledId) ?? typeOf(scheduledId) ?? '?';
        const scheduledAt = times.get(scheduledId);
        const startedAt = started.get(scheduledId);
        const entry = (result.activities[type] ??= { count: 0, queueMs: 0, runMs: 0 });
        entry.count++;
        if (scheduledAt !== undefined && startedAt !== undefined) entry.queueMs += startedAt - scheduledAt;
        if (startedAt !== undefined) entry.runMs += at - startedAt;
        break;
      }
    }
  }
  const last = events[events.length - 1];
  if (result.signalToEndMs !== undefined && last) result.signalToEndMs += eventTimeMs(last);
  return result;
}
