import {
  ActivityCancellationType,
  type ActivityOptions,
  type ActivityInterfaceFor,
  type RetryPolicy,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { AgentActivities } from '../activities/create-activities';
import type { RapNotice } from '../shared/rap';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { FIRST_RETRY_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS, LOCAL_TOOL_ATTEMPT_MS } from '../shared/liveness';
import { WORKER_BOUND_START_TIMEOUT_MS } from '../shared/worker-bound';

/** Retries starting `initialInterval` apart and doubling, up to `maximumInterval` between tries. */
function doublingRetry(
  maximumInterval: RetryPolicy['maximumInterval'],
  maximumAttempts: number,
  initialInterval: RetryPolicy['initialInterval'] = '1 second',
): RetryPolicy {
  return { initialInterval, backoffCoefficient: 2, maximumInterval, maximumAttempts };
}

/**
 * The model activities retry transient failures (429, 5xx, timeouts, lost connections) with
 * backoff; the activity marks 4xx rejections non-retryable. The heartbeat timeout only notices a
 * dead worker: the activity heartbeats on a timer while it waits for the first token. A turn's
 * model call is retried for a time rather than a number of attempts (`modelCallBound`); these
 * attempts bound the transcript summary, which a run can do without.
 */
export const modelActivities = proxyActivities<Pick<AgentActivities, 'callModel' | 'summarizeTranscript'>>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT_MS,
  retry: doublingRetry('1 minute', 8, FIRST_RETRY_INTERVAL_MS),
});

/** A turn's model call: as many attempts as fit in `retryMs` from its first (schedule to close). */
export function modelCallBound(retryMs: number): Pick<ActivityOptions, 'scheduleToCloseTimeout' | 'retry'> {
  return { scheduleToCloseTimeout: retryMs, retry: { maximumAttempts: Number.POSITIVE_INFINITY } };
}

/** Asked of the worker running the workflow task itself: its floors and keys are what hold. */
export const admissionActivities = proxyLocalActivities<Pick<AgentActivities, 'admitConversation'>>({
  summary: 'admission: the worker checks the options against its floors',
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** Asked of the worker running the workflow task: it knows the workspace, the day and the platform. */
export const systemPromptActivities = proxyLocalActivities<Pick<AgentActivities, 'composeSystemPrompt'>>({
  summary: 'system prompt: the worker writes the default one',
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/**
 * Notifications (webhook deliveries, A2A push notifications): each attempt bounded, retried with backoff for about half an hour, on any worker.
 * A receiver that refuses for good (400, 401, 404, …) is not tried again.
 */
const NOTIFICATION_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '15 seconds',
  retry: doublingRetry('10 minutes', 12),
};

export const webhookActivities =
  proxyActivities<Pick<AgentActivities, 'deliverWebhook'>>(NOTIFICATION_OPTIONS);

/** A2A push notifications: delivered as webhooks are, to the URL the task's caller gave. */
export const a2aPushActivities =
  proxyActivities<Pick<AgentActivities, 'deliverA2APush'>>(NOTIFICATION_OPTIONS);

export const catalogActivities = proxyActivities<Pick<AgentActivities, 'listTools'>>({
  summary: "list the worker's tools",
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});

/** A tool's own retry policy, as its descriptor gives it. */
function toolRetryPolicy({ retry }: ToolDescriptor): RetryPolicy {
  return {
    maximumAttempts: retry.maximumAttempts,
    initialInterval: retry.initialIntervalMs,
    backoffCoefficient: retry.backoffCoefficient,
    maximumInterval: retry.maximumIntervalMs,
  };
}

/**
 * Each tool runs with its own timeouts and retry policy, taken from its descriptor. When a steer or
 * abort cancels it, the workflow waits for the activity to stop, so whatever the tool returned
 * before stopping reaches the model; except for tools that answer by callback, which cannot stop.
 * With `workerQueue` the call runs on that one worker's own task queue, and fails with a
 * schedule-to-start timeout when no worker takes it (the worker is gone).
 */
export function toolActivitiesFor(
  descriptor: ToolDescriptor,
  workerQueue?: string,
): ActivityInterfaceFor<Pick<AgentActivities, 'runTool'>> {
  return proxyActivities<Pick<AgentActivities, 'runTool'>>({
    ...(workerQueue ? { taskQueue: workerQueue, scheduleToStartTimeout: WORKER_BOUND_START_TIMEOUT_MS } : {}),
    // A tool that answers by callback cannot hear a cancel request: stop waiting for it at once.
    cancellationType: descriptor.asyncCompletion
      ? ActivityCancellationType.TRY_CANCEL
      : ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    startToCloseTimeout: descriptor.startToCloseTimeoutMs,
    ...(descriptor.asyncCompletion ? {} : { heartbeatTimeout: descriptor.heartbeatTimeoutMs }),
    retry: toolRetryPolicy(descriptor),
  });
}

/**
 * A short read-only tool's (`local` in its descriptor) one attempt by the worker that runs the
 * conversation, inside the workflow task: no activity task to dispatch and no workflow task to wake
 * after it, and its result is recorded with the task's completion, before the next model call is
 * scheduled. Bounded by LOCAL_TOOL_ATTEMPT_MS, so a steer waits no longer behind it; the call's
 * timeouts and retries are those of the activity it runs as when the attempt does not answer. A
 * crash runs the attempt again on the worker that takes the task.
 */
export const localToolAttempt = proxyLocalActivities<Pick<AgentActivities, 'runLocalTool'>>({
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  startToCloseTimeout: LOCAL_TOOL_ATTEMPT_MS,
  retry: { maximumAttempts: 1 },
});

/**
 * The whole of a local tool's call as a local activity with the tool's own timeouts and retries, as
 * runs recorded before LOCAL_TOOL_ATTEMPT_MS ran it (and replay it).
 */
export function localToolActivitiesFor(
  descriptor: ToolDescriptor,
): ActivityInterfaceFor<Pick<AgentActivities, 'runLocalTool'>> {
  return proxyLocalActivities<Pick<AgentActivities, 'runLocalTool'>>({
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    startToCloseTimeout: descriptor.startToCloseTimeoutMs,
    retry: toolRetryPolicy(descriptor),
  });
}

/** Best-effort notices to RAP tool servers (close_thread, cancel_tool_call, a user's choice): one attempt, never retried. */
export const noticeActivities = proxyActivities<{ sendRapNotice(notice: RapNotice): Promise<void> }>({
  summary: 'notice to RAP tool servers',
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});
