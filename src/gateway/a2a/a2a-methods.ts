import {
  A2A_ERROR_CODES,
  A2A_TERMINAL_STATES,
  A2AGetTaskParamsSchema,
  A2AListTasksParamsSchema,
  type A2ASendParams,
  type A2ATask,
  A2ATaskIdParamsSchema,
} from '../../shared/a2a';
import type { z } from 'zod';
import { schemaProblems } from '../../shared/schema-problems';
import { UpdateRefusedError } from '../../shared/conversation-errors';
import type { GatewayToken } from '../gateway-api';
import type { A2AContext } from './a2a-context';
import { A2AError, invalidParams, taskNotFound } from './a2a-errors';
import { followTask } from './a2a-follow';
import { parseTaskId } from './a2a-ids';
import { takeWithPushConfig } from './a2a-push-configs';
import { authorizeOnTask } from './a2a-send';
import type { TaskRef } from '../../shared/a2a-task-parts';
import { readTask } from './a2a-task-reader';
import { taskView } from './a2a-task-view';

/** How long a blocking send (or a cancel) waits for its task to end or wait for input, unless told otherwise. */
export const DEFAULT_A2A_BLOCKING_MS = 60_000;

/** The params of a method, read by its schema: InvalidParams naming each problem. */
export function paramsOf<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params ?? {});
  if (!parsed.success) throw invalidParams(`invalid params: ${schemaProblems(parsed.error)}`);
  return parsed.data;
}

export function refOf(taskId: string): TaskRef {
  const named = parseTaskId(taskId);
  if (!named) throw taskNotFound(taskId);
  return { taskId, ...named };
}

/**
 * SendMessage: takes the message, then (unless `returnImmediately`) waits until its task ends or
 * waits for the caller, at most the gateway's blocking time, and answers with the task as it stands.
 */
export async function sendMessage(
  a2a: A2AContext,
  token: GatewayToken,
  params: A2ASendParams,
): Promise<{ task: A2ATask }> {
  const taken = await takeWithPushConfig(a2a, token, params);
  if (params.configuration?.returnImmediately) return { task: taken.snapshot };
  await waitForPause(a2a, taken);
  const historyLength = params.configuration?.historyLength;
  try {
    return { task: (await readTask(a2a.deps.agent, taken.ref, { historyLength })).task };
  } catch (error) {
    // The conversation has not handled the message yet: it stands as it was taken.
    if (error instanceof A2AError && error.code === A2A_ERROR_CODES.taskNotFound)
      return { task: taken.snapshot };
    throw error;
  }
}

/** Follows the task until it ends or waits for its caller, at most the blocking time. */
async function waitForPause(
  a2a: A2AContext,
  from: Pick<Parameters<typeof followTask>[1], 'ref' | 'afterRun' | 'cursor'>,
): Promise<void> {
  const signal = AbortSignal.timeout(a2a.deps.a2aBlockingMs ?? DEFAULT_A2A_BLOCKING_MS);
  try {
    for await (const update of followTask(a2a.deps.agent, {
      ...from,
      signal,
      pollMs: a2a.deps.eventPollMs,
    })) {
      if (update.closes) return;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

export async function getTask(a2a: A2AContext, token: GatewayToken, params: unknown): Promise<A2ATask> {
  const { id, historyLength } = paramsOf(A2AGetTaskParamsSchema, params);
  const ref = refOf(id);
  await authorizeOnTask(a2a, token, 'status', ref);
  return (await readTask(a2a.deps.agent, ref, { historyLength })).task;
}

/**
 * CancelTask aborts the run that works on the task (as the token's identity) and answers once the
 * task is canceled. A task that has ended, or whose message no run has taken yet, is not cancelable.
 */
export async function cancelTask(a2a: A2AContext, token: GatewayToken, params: unknown): Promise<A2ATask> {
  const { id } = paramsOf(A2ATaskIdParamsSchema, params);
  const ref = refOf(id);
  await authorizeOnTask(a2a, token, 'abort', ref);
  const { agent } = a2a.deps;
  const view = await readTask(agent, ref, { historyLength: 0 });
  const notCancelable = (why: string) => new A2AError(A2A_ERROR_CODES.taskNotCancelable, `task ${id} ${why}`);
  if (A2A_TERMINAL_STATES.has(view.state)) throw notCancelable(`has ended (${view.state})`);
  const status = await agent.status(ref.contextId);
  if (view.run === undefined || status.runCount !== view.run || status.status !== 'running')
    throw notCancelable('has not started: its message waits for the run in progress');
  try {
    await agent.abort(ref.contextId, { by: token.name, reason: 'canceled by its A2A caller' });
  } catch (error) {
    if (error instanceof UpdateRefusedError) throw notCancelable(`could not be canceled: ${error.message}`);
    throw error;
  }
  await waitForPause(a2a, { ref, afterRun: view.afterRun, cursor: { seq: view.lastSeq, run: view.run } });
  return (await readTask(agent, ref)).task;
}

/**
 * ListTasks of one context (a conversation): a task for each message its runs took that the
 * conversation's kept events still show, newest first, `pageSize` a page.
 */
export async function listTasks(a2a: A2AContext, token: GatewayToken, params: unknown) {
  const query = paramsOf(A2AListTasksParamsSchema, params);
  if (query.contextId === undefined)
    throw invalidParams('ListTasks here lists the tasks of one context: give its contextId');
  const contextId = query.contextId;
  await authorizeOnTask(a2a, token, 'status', { taskId: contextId, contextId, messageId: '' });
  const { agent } = a2a.deps;
  const [events, pending, execution, status] = await Promise.all([
    agent.events(contextId, 0),
    agent.pendingApprovals(contextId),
    agent.execution(contextId),
    agent.status(contextId),
  ]);
  const ended = execution.executionStatus !== 'RUNNING' || status.status === 'ended';
  const tasks: A2ATask[] = [];
  for (const started of events) {
    if (started.type !== 'run_started') continue;
    for (const messageId of started.messageIds) {
      const ref = { taskId: `${contextId}/${messageId}`, contextId, messageId };
      const receipt = { afterSeq: started.seq - 1, afterRun: started.run - 1 };
      const view = taskView({
        ref,
        receipt,
        events: events.filter((event) => event.seq > receipt.afterSeq),
        pending,
        ended,
        now: Date.now(),
      });
      if (query.status !== undefined && view.state !== query.status) continue;
      const { artifacts: _artifacts, ...withoutArtifacts } = view.task;
      tasks.push(query.includeArtifacts ? view.task : withoutArtifacts);
    }
  }
  tasks.reverse();
  const pageSize = query.pageSize ?? 50;
  const offset = query.pageToken ? Number(query.pageToken) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw invalidParams('not a page token of this agent');
  const page = tasks.slice(offset, offset + pageSize);
  const next = offset + pageSize < tasks.length ? String(offset + pageSize) : '';
  return { tasks: page, nextPageToken: next, pageSize, totalSize: tasks.length };
}
