import type { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';

const CANCEL_REQUESTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED;

/** How an activity is being stopped: the SDK's cancellation, or a cancel request seen in this process first. */
export interface ActivityStop {
  /** Fires on the SDK's cancellation or on a cancel request confirmed here, whichever comes first. */
  readonly signal: AbortSignal;
  /** The workflow asked this activity to stop (steer, abort); a timeout or a shutdown is not that. */
  readonly cancelRequested: boolean;
  readonly timedOut: boolean;
  /** Settles when the SDK's own cancellation fires: an activity is reported cancelled only after it. */
  sdkCancellation(): Promise<void>;
  /** Forgets the activity: call once it has finished. */
  release(): void;
}

/** The ids of a run's activities the server has a cancel request for; undefined when the run is not found. */
export type CancelRequestedActivities = (
  context: Context,
  workflowId: string,
  runId: string,
) => Promise<ReadonlySet<string> | undefined>;

interface Watched {
  context: Context;
  controller: AbortController;
  confirmed: boolean;
}

interface Run {
  workflowId: string;
  activities: Map<string, Watched>;
  /** Until when the server is asked; a new request while asking extends it. */
  askUntil: number;
  asking: boolean;
}

export interface LocalCancelRequestsOptions {
  /** How often the server is asked whether the cancel request is recorded. Default 10 ms. */
  pollMs?: number;
  /** How long it is asked after a request; the SDK's heartbeat delivers it anyway. Default 3 s. */
  patienceMs?: number;
  /** Asks in flight at once, over all runs: aborting many conversations at once must not flood the server. Default 4. */
  maxAsksInFlight?: number;
  cancelRequestedActivities?: CancelRequestedActivities;
}

/**
 * A cancel request reaches a running activity with the response to its next heartbeat, which the
 * SDK sends at most once per throttle interval (a second here): up to a second after a steer. When
 * the workflow that asked runs in this process it says so at once (a sink), and the activities of
 * that run here ask the server every few milliseconds until it has recorded the request, then stop.
 * Only a request the server holds stops an activity, so what the activity reports next (its partial
 * result) follows the request in the history exactly as when the heartbeat brings it.
 */
export class LocalCancelRequests {
  private readonly runs = new Map<string, Run>();
  private readonly pollMs: number;
  private readonly patienceMs: number;
  private readonly cancelRequestedActivities: CancelRequestedActivities;
  private readonly maxAsksInFlight: number;
  private asksInFlight = 0;
  private readonly waitingForSlot: Array<() => void> = [];

  constructor(options: LocalCancelRequestsOptions = {}) {
    this.pollMs = options.pollMs ?? 10;
    this.patienceMs = options.patienceMs ?? 3_000;
    this.maxAsksInFlight = options.maxAsksInFlight ?? 4;
    this.cancelRequestedActivities = options.cancelRequestedActivities ?? cancelRequestedFromDescribe;
  }

  /** Starts watching the current activity for a cancel request of its run. */
  watch(context: Context): ActivityStop {
    const { workflowExecution, activityId } = context.info;
    // An activity started on its own has no workflow to hear from.
    if (!workflowExecution) return activityStop(context, undefined, () => undefined);
    const run = this.runs.get(workflowExecution.runId) ?? {
      workflowId: workflowExecution.workflowId,
      activities: new Map<string, Watched>(),
      askUntil: 0,
      asking: false,
    };
    this.runs.set(workflowExecution.runId, run);
    const watched: Watched = { context, controller: new AbortController(), confirmed: false };
    run.activities.set(activityId, watched);
    return activityStop(context, watched, () => {
      if (run.activities.get(activityId) === watched) run.activities.delete(activityId);
      if (run.activities.size === 0 && !run.asking) this.runs.delete(workflowExecution.runId);
    });
  }

  /** The run's workflow, in this process, has just asked for some of its activities to be cancelled. */
  requested(runId: string): void {
    const run = this.runs.get(runId);
    if (!run || run.activities.size === 0) return;
    run.askUntil = Date.now() + this.patienceMs;
    if (!run.asking) void this.ask(runId, run);
  }

  private async ask(runId: string, run: Run): Promise<void> {
    run.asking = true;
    try {
      while (Date.now() < run.askUntil) {
        const waiting = [...run.activities.entries()].filter(([, watched]) => !watched.confirmed);
        if (waiting.length === 0) return;
        const asked = await this.oneAsk(() =>
          this.cancelRequestedActivities(waiting[0]![1].context, run.workflowId, runId),
        ).catch(() => new Set<string>());
        if (asked === undefined) return;
        for (const [activityId, watched] of waiting) {
          if (!asked.has(activityId)) continue;
          watched.confirmed = true;
          watched.controller.abort(new Error('the workflow asked this activity to stop'));
        }
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      }
    } finally {
      run.asking = false;
      if (run.activities.size === 0) this.runs.delete(runId);
    }
  }

  private async oneAsk<T>(ask: () => Promise<T>): Promise<T> {
    while (this.asksInFlight >= this.maxAsksInFlight) {
      await new Promise<void>((resolve) => this.waitingForSlot.push(resolve));
    }
    this.asksInFlight++;
    try {
      return await ask();
    } finally {
      this.asksInFlight--;
      this.waitingForSlot.shift()?.();
    }
  }
}

/** The SDK's cancellation of the activity, joined by a confirmed request seen here when `watched`. */
function activityStop(context: Context, watched: Watched | undefined, release: () => void): ActivityStop {
  return {
    signal: watched
      ? AbortSignal.any([context.cancellationSignal, watched.controller.signal])
      : context.cancellationSignal,
    get cancelRequested() {
      return watched?.confirmed === true || context.cancellationDetails?.cancelRequested === true;
    },
    get timedOut() {
      return watched?.confirmed !== true && context.cancellationDetails?.timedOut === true;
    },
    sdkCancellation: () =>
      context.cancelled.then(
        () => undefined,
        () => undefined,
      ),
    release,
  };
}

/** Reads the run's pending activities from the server with the worker's own client. */
const cancelRequestedFromDescribe: CancelRequestedActivities = async (context, workflowId, runId) => {
  let client;
  try {
    client = context.client;
  } catch {
    return undefined; // no client to ask (a test's mock environment): the heartbeat brings the request
  }
  try {
    const description = await client.workflowService.describeWorkflowExecution({
      namespace: context.info.workflowNamespace,
      execution: { workflowId, runId },
    });
    return new Set(
      (description.pendingActivities ?? [])
        .filter((activity) => activity.state === CANCEL_REQUESTED && activity.activityId)
        .map((activity) => activity.activityId!),
    );
  } catch (error) {
    if ((error as { code?: number }).code === 5 /* NOT_FOUND */) return undefined;
    throw error;
  }
};

/** The one the activities and the workflow sink of every worker in this process share. */
export const processLocalCancelRequests = new LocalCancelRequests();
