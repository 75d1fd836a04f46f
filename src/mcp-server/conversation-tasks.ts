import {
  type CallToolResult,
  ErrorCode,
  type GetTaskResult,
  McpError,
  RELATED_TASK_META_KEY,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { GatewayAction } from '../gateway/gateway-api';
import { callerErrorMessage } from './caller-errors';
import { line } from './quoted-text';
import { type RequestContext, followForRequest, invalidTaskParams } from './request-context';
import { reportOfStanding, statusResult } from './run-report';
import { type RunStanding, runStanding, standingOfEnd } from './run-standing';
import { type TaskRef, taskIdOf, taskRefOf } from './task-ids';

/** How long a task can be read after it was made; the conversation's status and transcript stay readable after. */
export const TASK_TTL_MS = 24 * 60 * 60 * 1_000;
/** How often a client is asked to poll a task. */
export const TASK_POLL_MS = 2_000;
/** How long cancelling waits for the aborted run to end. */
const CANCEL_WAIT_MS = 30_000;

/**
 * MCP tasks (protocol 2025-11-25) over conversations: a task is the run that takes one message.
 * Nothing about a task is kept by the server: its id names the conversation and the message, and
 * its status is read from the conversation each time, so any gateway answers for any task, and a
 * task outlives the gateway that made it.
 */
export function taskOf(ref: TaskRef, standing: RunStanding, context: RequestContext, now = Date.now()): Task {
  const canAsk = context.deps.session().elicits && context.deps.caller.mayEver('approve');
  const { status, statusMessage } = taskStatusOf(standing, canAsk);
  const updatedAt =
    standing.state === 'finished'
      ? standing.event.at
      : standing.state === 'running'
        ? (standing.updatedAt ?? ref.createdAt)
        : standing.state === 'ended' || standing.state === 'forgotten'
          ? now
          : ref.createdAt;
  return {
    taskId: taskIdOf(ref),
    status,
    statusMessage,
    createdAt: new Date(ref.createdAt).toISOString(),
    lastUpdatedAt: new Date(Math.max(updatedAt, ref.createdAt)).toISOString(),
    ttl: TASK_TTL_MS,
    pollInterval: TASK_POLL_MS,
  };
}

function taskStatusOf(standing: RunStanding, canAsk: boolean): Pick<Task, 'status' | 'statusMessage'> {
  switch (standing.state) {
    case 'not_taken':
      return { status: 'working', statusMessage: 'sent; the conversation has not taken it yet' };
    case 'queued':
      return { status: 'working', statusMessage: 'queued behind the run in progress' };
    case 'running': {
      const waiting = standing.pending[0];
      if (!waiting) return { status: 'working', statusMessage: `run ${standing.run} in progress` };
      const what = `waiting for approval to run ${line(waiting.toolName, 80)} (tool_call_id ${line(waiting.toolCallId, 100)}, arguments_sha256 ${waiting.argumentsSha256})`;
      return canAsk
        ? { status: 'input_required', statusMessage: what }
        : { status: 'working', statusMessage: `${what}: decide with decide_approval` };
    }
    case 'finished': {
      const { outcome } = standing.event;
      const status = outcome === 'aborted' ? 'cancelled' : outcome === 'error' ? 'failed' : 'completed';
      return { status, statusMessage: `run ${standing.event.run} finished (${outcome})` };
    }
    case 'ended':
      return {
        status: 'failed',
        statusMessage: `the conversation ended (${standing.executionStatus.toLowerCase()})`,
      };
    case 'forgotten':
      return { status: 'completed', statusMessage: 'finished long ago; how is no longer kept' };
  }
}

/** The task `taskId` names, checked against the caller's scope, or the protocol's refusal. */
export async function taskRefFor(
  context: RequestContext,
  taskId: string,
  action: GatewayAction,
  now = Date.now(),
): Promise<TaskRef> {
  const ref = taskRefOf(taskId);
  if (!ref) throw invalidTaskParams('Failed to retrieve task: Task not found');
  if (now - ref.createdAt > TASK_TTL_MS) throw invalidTaskParams('Failed to retrieve task: Task has expired');
  await asProtocolError(() => context.deps.caller.authorize(action, ref.conversationId));
  return ref;
}

/** `tasks/get`: the task as the conversation says it stands now. */
export async function getTask(context: RequestContext, taskId: string): Promise<GetTaskResult> {
  const ref = await taskRefFor(context, taskId, 'status');
  const standing = await asProtocolError(() => runStanding(context.deps.agent, ref));
  return taskOf(ref, standing, context);
}

/**
 * `tasks/result`: waits for the run to end (with its progress, and its approvals asked where the
 * client answers elicitations), then answers what the tool call would have.
 */
export async function taskResult(context: RequestContext, taskId: string): Promise<CallToolResult> {
  const ref = await taskRefFor(context, taskId, 'status');
  const end = await asProtocolError(() =>
    followForRequest(context, ref, {
      relatedTaskId: taskId,
      ...(ref.progressToken !== undefined ? { progressToken: ref.progressToken } : {}),
    }),
  );
  if (end.how === 'stopped') throw new McpError(ErrorCode.RequestTimeout, 'stopped before the task ended');
  const result = statusResult({ ...reportOfStanding(ref, standingOfEnd(end)), taskId });
  return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } };
}

/**
 * `tasks/cancel`: aborts the task's run and waits for it to end. A message still queued behind
 * another run cannot be withdrawn: that is refused, and so is a task that has ended.
 */
export async function cancelTask(context: RequestContext, taskId: string): Promise<Task> {
  const { agent, caller } = context.deps;
  const ref = await taskRefFor(context, taskId, 'abort');
  const standing = await asProtocolError(() => runStanding(agent, ref));
  const before = taskOf(ref, standing, context);
  if (['completed', 'failed', 'cancelled'].includes(before.status))
    throw invalidTaskParams(`Cannot cancel task in terminal status: ${before.status}`);
  if (standing.state !== 'running')
    throw new McpError(
      ErrorCode.InvalidRequest,
      'the message waits for the run in progress and cannot be withdrawn; cancel the task once its run has started',
    );
  await asProtocolError(() =>
    agent.abort(ref.conversationId, { by: caller.name, reason: 'the MCP task was cancelled' }),
  );
  const end = await asProtocolError(async () => {
    const following = agent.followRun(
      { ...ref, run: standing.run },
      { signal: AbortSignal.timeout(CANCEL_WAIT_MS) },
    );
    let next = await following.next();
    while (!next.done) next = await following.next();
    return next.value;
  });
  const after =
    end.how === 'stopped' ? await asProtocolError(() => runStanding(agent, ref)) : standingOfEnd(end);
  return taskOf(ref, after, context);
}

/** Runs `call`, turning an error the caller can act on into the protocol's invalid-params refusal. */
async function asProtocolError<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const message = callerErrorMessage(error);
    if (message !== undefined) throw invalidTaskParams(message);
    throw error;
  }
}
