import type { temporal } from '@temporalio/proto';
import { timestampMs } from '../history/history-numbers';

/** The name the model activity is registered under. */
/** The activity type of a model call, as describe() names its pending activities. */
export const MODEL_ACTIVITY_TYPE = 'callModel';

/**
 * A turn's model call whose last attempt failed for a passing reason (429, 5xx, a timeout, a lost
 * connection, a dead worker) and that Temporal is about to try again, or is trying again.
 */
export interface RetryingModelCall {
  /** The model activity's id in its execution. */
  activityId: string;
  /** The attempt that comes next or runs now: 2 after the first failure. */
  attempt: number;
  /** Why the last attempt failed, as the worker reported it. */
  error: string;
  /** When the run gives up on the call and ends with an error (ms since the epoch), when Temporal says. */
  givesUpAt?: number;
}

/** The model call being retried among `describe()`'s pending activities; undefined when none is. */
export function retryingModelCall(
  pending: readonly temporal.api.workflow.v1.IPendingActivityInfo[],
): RetryingModelCall | undefined {
  for (const activity of pending) {
    const attempt = activity.attempt ?? 1;
    if (activity.activityType?.name !== MODEL_ACTIVITY_TYPE || attempt < 2 || !activity.lastFailure) continue;
    const givesUpAt = timestampMs(activity.expirationTime);
    return {
      activityId: activity.activityId ?? '',
      attempt,
      error: activity.lastFailure.message || 'no message',
      ...(givesUpAt ? { givesUpAt } : {}),
    };
  }
  return undefined;
}
