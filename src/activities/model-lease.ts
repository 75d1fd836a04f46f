import { Context } from '@temporalio/activity';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { METRIC } from '../shared/agent-metrics';
import {
  type LeaseOutcome,
  type LeaseRequest,
  MODEL_LIMITER_WORKFLOW_TYPE,
  type ModelLimiterInput,
  type ModelLimits,
  acquireModelLeaseUpdate,
  modelLimiterWorkflowId,
  releaseModelLeaseSignal,
  renewModelLeaseSignal,
} from '../shared/model-limiter';
import { rootConversationOf } from '../shared/sub-agents';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import { isServerBusy } from './server-busy';
import { WorkerLeaseQueue } from './worker-lease-queue';

export interface ModelLimiterSettings {
  /** Names the endpoint: every worker calling it with the same key shares one limiter. */
  endpointKey: string;
  limits: ModelLimits;
}

/** A lease on one model call: renewed while held, released with how the call went. */
export interface HeldModelLease {
  release(outcome: LeaseOutcome, retryAfterMs?: number): Promise<void>;
}

/** Grants model calls their turn across the fleet; asked from inside a model activity. */
export interface ModelLimiter {
  acquire(): Promise<HeldModelLease>;
}

/** How long to wait before asking again when the server refuses more waiting updates for the limiter. */
const BUSY_LIMITER_RETRY_MS = 500;

/**
 * The limiter entity of `settings.endpointKey`, started by the first call that asks (update-with-start);
 * a worker's calls queue in its WorkerLeaseQueue first, so at most `maxConcurrent` of them ask at once.
 * The agent the call counts against is the activity's fairness key (the conversation's agent id,
 * or its tree's root when it names none) and its tree is the root conversation: the workflow id up
 * to its first sub-agent part.
 */
export function fleetModelLimiter(settings: ModelLimiterSettings): ModelLimiter {
  const workflowId = modelLimiterWorkflowId(settings.endpointKey);
  const { maxConcurrent, maxRps } = settings.limits;
  const queue = new WorkerLeaseQueue(maxConcurrent ?? Math.max(1, Math.ceil(maxRps ?? 1)));
  return {
    async acquire() {
      const context = Context.current();
      const { info, client } = context;
      const conversation = info.workflowExecution?.workflowId ?? info.activityId;
      const tree = rootConversationOf(conversation);
      const request: LeaseRequest = {
        ticket: `${conversation}/${info.workflowExecution?.runId ?? ''}/${info.activityId}/${info.attempt}`,
        agent: info.priority?.fairnessKey || tree,
        tree,
        limits: settings.limits,
      };
      const handle = client.workflow.getHandle(workflowId);
      const askedAt = Date.now();
      await queue.turn(request, context.cancellationSignal);
      try {
        await waitForLease(client, workflowId, info.taskQueue, request, context.cancellationSignal);
      } catch (error) {
        // Gives up the place in the queue (or a lease granted as the wait was cancelled).
        await handle
          .signal(releaseModelLeaseSignal, { ticket: request.ticket, outcome: 'failed' })
          .catch(() => undefined);
        throw error;
      } finally {
        queue.done(request.ticket);
      }
      context.metricMeter
        .createHistogram(METRIC.modelLeaseWait, 'int', 'ms')
        .record(Date.now() - askedAt, { endpoint: settings.endpointKey });
      const renewing = setInterval(
        () => void handle.signal(renewModelLeaseSignal, { ticket: request.ticket }).catch(() => undefined),
        settings.limits.leaseTtlMs / 3,
      );
      return {
        async release(outcome, retryAfterMs) {
          clearInterval(renewing);
          if (outcome === 'rate_limited') {
            context.metricMeter
              .createCounter(METRIC.modelThrottles)
              .add(1, { endpoint: settings.endpointKey });
          }
          await handle
            .signal(releaseModelLeaseSignal, {
              ticket: request.ticket,
              outcome,
              ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
            })
            .catch(() => undefined); // an unreleased lease comes back when it expires
        },
      };
    },
  };
}

async function waitForLease(
  client: Client,
  workflowId: string,
  taskQueue: string,
  request: LeaseRequest,
  cancelled: AbortSignal,
): Promise<void> {
  for (;;) {
    cancelled.throwIfAborted();
    const asked = client.workflow.executeUpdateWithStart(acquireModelLeaseUpdate, {
      args: [request],
      startWorkflowOperation: new WithStartWorkflowOperation<(input: ModelLimiterInput) => Promise<void>>(
        MODEL_LIMITER_WORKFLOW_TYPE,
        {
          workflowId,
          taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ limits: request.limits }],
          // Every model call of the fleet waits on this workflow: a dead worker's task is taken over soon.
          workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
          // Its workflow tasks go before the conversations' that wait for it.
          priority: { priorityKey: 1 },
        },
      ),
    });
    let answer;
    try {
      answer = await untilAborted(asked, cancelled);
    } catch (error) {
      if (!isServerBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, BUSY_LIMITER_RETRY_MS));
      continue;
    }
    if (answer.granted) return;
  }
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
