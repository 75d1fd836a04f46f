import type { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import type { ActivityInterceptors } from '@temporalio/worker';

const HEARTBEAT = temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT;

/** The longest an attempt waits for the reset. */
const RESET_WAIT_MS = 2_000;

/** What the interceptor needs of the workflow service: one description, one reset. */
export interface StickinessService {
  describeWorkflowExecution(request: {
    namespace: string;
    execution: { workflowId: string; runId: string };
  }): Promise<{
    pendingActivities?: Array<{
      activityId?: string | null;
      lastFailure?: { timeoutFailureInfo?: { timeoutType?: number | null } | null } | null;
    }> | null;
  }>;
  resetStickyTaskQueue(request: {
    namespace: string;
    execution: { workflowId: string; runId: string };
  }): Promise<unknown>;
}

/**
 * An attempt that follows one whose heartbeats stopped was most likely taken over from a dead
 * worker, which may also be the worker holding the conversation in its cache. The workflow task that
 * takes this attempt's result would first wait for that worker on its sticky queue; resetting the
 * conversation's stickiness sends it to any worker at once (the price: one replay, when the worker
 * holding it was alive after all). Other retries (a rate-limited model call) leave stickiness alone.
 * Best effort: a failure to describe or reset changes nothing for the attempt itself.
 * The attempt starts once the reset is done (two calls to the frontend), or after 2 s at most.
 */
export function lostWorkerStickiness(
  service: (context: Context) => StickinessService,
): (context: Context) => ActivityInterceptors {
  return (context) => ({
    inbound: {
      async execute(input, next) {
        const { attempt, activityId, workflowExecution, workflowNamespace, activityNamespace } = context.info;
        if (attempt > 1 && workflowExecution) {
          // Before the attempt, or a quick one's result would reach the sticky queue first; bounded,
          // so a slow frontend holds the attempt back no longer than this.
          await Promise.race([
            resetAfterLostHeartbeat(() => service(context), {
              namespace: workflowNamespace ?? activityNamespace,
              execution: workflowExecution,
              activityId,
            }).catch(() => false),
            new Promise((resolve) => setTimeout(resolve, RESET_WAIT_MS).unref()),
          ]);
        }
        return next(input);
      },
    },
  });
}

/** `service` is asked for inside, so a worker without a client fails the reset, never the attempt. */
async function resetAfterLostHeartbeat(
  stickiness: () => StickinessService,
  target: { namespace: string; execution: { workflowId: string; runId: string }; activityId: string },
): Promise<boolean> {
  const { namespace, execution } = target;
  const service = stickiness();
  const described = await service.describeWorkflowExecution({ namespace, execution });
  const previous = described.pendingActivities?.find((pending) => pending.activityId === target.activityId);
  if (previous?.lastFailure?.timeoutFailureInfo?.timeoutType !== HEARTBEAT) return false;
  await service.resetStickyTaskQueue({ namespace, execution });
  return true;
}
