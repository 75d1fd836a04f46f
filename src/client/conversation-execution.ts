// Reading what Temporal holds of a conversation's workflow without asking the workflow: its
// description, the open conversations of a task queue, and from its history whether a worker
// admitted it and why it failed. So these answer for ended conversations and with no worker running.
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import { assertConversationId } from '../shared/ids';
import { LOCAL_ACTIVITY_MARKER } from '../shared/local-activity-marker';
import type { ClientContext } from './client-context';
import { describeWhileUnreachable } from './query-retry';
import { type RetryingModelCall, retryingModelCall } from './retrying-model-call';

/** What Temporal knows of a conversation's workflow, without asking the workflow. */
export interface ConversationExecution {
  /** The conversation's id (its workflow id). */
  conversationId: string;
  /** RUNNING while the conversation lasts; COMPLETED, FAILED, TERMINATED, … once it has ended. */
  executionStatus: WorkflowExecutionStatusName;
  /** When its current execution started. */
  startTime: Date;
  /** When it ended; absent while it lasts. */
  closeTime?: Date;
  /** The task queue it runs on. */
  taskQueue: string;
  /** `conversation` for conversations; anything else is some other workflow that happens to have this id. */
  workflowType: string;
  /** The turn's model call, while an attempt of it has failed and Temporal tries it again. */
  modelRetry?: RetryingModelCall;
}

/** One conversation in `AgentClient.list`: its workflow execution as Temporal's visibility store reports it. */
export interface ConversationListing {
  /** The conversation's id. */
  conversationId: string;
  /** When its current execution started. */
  startTime: Date;
  /** The task queue it runs on. */
  taskQueue: string;
}

/** How a worker's first look at a conversation went, as `AgentClient.admission` reports it. */
export type Admission =
  /** A worker admitted it. */
  | {
      /** Always true here. */
      admitted: true;
    }
  /** A worker refused it, and why. */
  | {
      /** Always false here. */
      admitted: false;
      /** Why the worker refused it. */
      reason: string;
    }
  /** No worker has taken it yet. */
  | {
      /** Always true here. */
      untaken: true;
    };

export async function execution(
  context: ClientContext,
  conversationId: string,
): Promise<ConversationExecution> {
  const description = await context.explainErrors(conversationId, () =>
    describeWhileUnreachable(context.handle(conversationId)),
  );
  const modelRetry = retryingModelCall(description.raw.pendingActivities ?? []);
  return {
    conversationId,
    executionStatus: description.status.name,
    startTime: description.startTime,
    ...(description.closeTime ? { closeTime: description.closeTime } : {}),
    taskQueue: description.taskQueue,
    workflowType: description.type,
    ...(modelRetry ? { modelRetry } : {}),
  };
}

export async function* list(context: ClientContext): AsyncGenerator<ConversationListing> {
  const query = `WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${context.taskQueue.replace(/'/g, "\\'")}'`;
  for await (const execution of context.client.workflow.list({ query })) {
    yield {
      conversationId: execution.workflowId,
      startTime: execution.startTime,
      taskQueue: execution.taskQueue,
    };
  }
}

export async function admission(
  context: ClientContext,
  conversationId: string,
  waitMs: number,
): Promise<Admission> {
  const { client } = context;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const description = await context.handle(conversationId).describe();
    if (description.status.name !== 'RUNNING') {
      const reason = await failureOf(context, conversationId);
      return reason === undefined ? { admitted: true } : { admitted: false, reason };
    }
    const { history } = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId: conversationId, runId: description.runId },
      maximumPageSize: 64,
    });
    // The admission is the run's first local activity, and its marker is recorded by the task
    // that acts on it (and fails the run on a refusal). A completed task alone says nothing: a
    // worker completes a task that waits on a slow local activity to keep it alive.
    const events = history?.events ?? [];
    const closed = events.some(
      (event) =>
        event.workflowExecutionFailedEventAttributes || event.workflowExecutionTerminatedEventAttributes,
    );
    if (
      !closed &&
      events.some((event) => event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER)
    )
      return { admitted: true };
    if (Date.now() >= deadline) return { untaken: true };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function failureOf(context: ClientContext, conversationId: string): Promise<string | undefined> {
  const { client } = context;
  const { history } = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId: assertConversationId(conversationId) },
    maximumPageSize: 1,
  });
  const last = history?.events?.[0];
  return (
    last?.workflowExecutionFailedEventAttributes?.failure?.message ??
    last?.workflowExecutionTerminatedEventAttributes?.reason ??
    undefined
  );
}
