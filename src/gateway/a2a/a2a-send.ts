import { A2A_TERMINAL_STATES, type A2AMessageIn, type A2ATask } from '../../shared/a2a';
import { ConversationNotFoundError } from '../../shared/conversation-errors';
import { DEFAULT_AGENT_ID } from '../../shared/agent-id';
import type { GatewayToken } from '../gateway-api';
import { decideAs } from '../gateway-decision';
import { GatewayAuthError } from '../gateway-tokens';
import type { A2AContext } from './a2a-context';
import type { StreamCursor } from './a2a-cursor';
import { invalidParams, taskNotFound, unsupported } from './a2a-errors';
import { conversationMessageId, newContextId, parseTaskId, taskIdOf } from './a2a-ids';
import { contentOf } from './a2a-message-parts';
import { type TaskRef, statusOf } from '../../shared/a2a-task-parts';
import { readTask } from './a2a-task-reader';

/** A message taken: the task it is part of, the task as it stood, and where following it begins. */
export interface Taken {
  ref: TaskRef;
  snapshot: A2ATask;
  afterRun: number;
  cursor: StreamCursor;
}

/**
 * Takes a caller's message. Without a `taskId` it is a new task: a user message to its context's
 * conversation (started when the token may start it), under an id made from the token and the
 * caller's `messageId`, so a retry is the same message and runs once. With a `taskId` it continues
 * that task: decisions on what it waits for, or free text that steers its run.
 */
export async function takeMessage(
  a2a: A2AContext,
  token: GatewayToken,
  message: A2AMessageIn,
): Promise<Taken> {
  return message.taskId === undefined
    ? newTask(a2a, token, message)
    : continueTask(a2a, token, message, message.taskId);
}

async function newTask(a2a: A2AContext, token: GatewayToken, message: A2AMessageIn): Promise<Taken> {
  const { text, decisions } = contentOf(message);
  if (decisions.length)
    throw invalidParams('a decision answers a task: send it with the taskId of the task that waits');
  if (!text) throw invalidParams('the message has no text');
  const contextId = message.contextId ?? newContextId(token, message.messageId);
  const agentId = a2a.card.agentId ?? DEFAULT_AGENT_ID;
  const start = mayStart(a2a, token, contextId, agentId);
  try {
    await a2a.access.authorizeOn(token, 'send', contextId);
  } catch (error) {
    // Looking up the agent found no conversation: one this token may start, it may send to.
    if (!(start && error instanceof ConversationNotFoundError)) throw error;
  }
  const messageId = conversationMessageId(token, message.messageId);
  const sent = await a2a.deps.agent.send(contextId, text, {
    messageId,
    sender: token.name,
    start,
    ...(a2a.card.agentId ? { options: { agentId: a2a.card.agentId } } : {}),
  });
  a2a.metrics.messageTaken('task');
  const ref = { taskId: taskIdOf(contextId, messageId), contextId, messageId };
  const snapshot: A2ATask = {
    id: ref.taskId,
    contextId,
    status: statusOf(ref, 'TASK_STATE_SUBMITTED', Date.now()),
  };
  return { ref, snapshot, afterRun: sent.afterRun, cursor: { seq: sent.afterSeq } };
}

function mayStart(a2a: A2AContext, token: GatewayToken, contextId: string, agentId: string): boolean {
  try {
    a2a.access.authorizeStart(token, contextId, agentId);
    return true;
  } catch (error) {
    if (error instanceof GatewayAuthError) return false;
    throw error;
  }
}

async function continueTask(
  a2a: A2AContext,
  token: GatewayToken,
  message: A2AMessageIn,
  taskId: string,
): Promise<Taken> {
  const named = parseTaskId(taskId);
  if (!named) throw taskNotFound(taskId);
  if (message.contextId !== undefined && message.contextId !== named.contextId) {
    throw invalidParams(
      `contextId ${JSON.stringify(message.contextId)} is not the context of task ${JSON.stringify(taskId)}`,
    );
  }
  const ref = { taskId, ...named };
  const { text, decisions } = contentOf(message);
  await authorizeOnTask(a2a, token, decisions.length ? 'approve' : 'steer', ref);
  const view = await readTask(a2a.deps.agent, ref, { historyLength: 0 });
  if (A2A_TERMINAL_STATES.has(view.state))
    throw unsupported(`task ${taskId} has ended (${view.state}): send a new message`);
  const cursor = { seq: view.lastSeq, ...(view.run !== undefined ? { run: view.run } : {}) };
  const taken = { ref, snapshot: view.task, afterRun: view.afterRun, cursor };
  if (decisions.length) {
    const pending = await a2a.deps.agent.pendingApprovals(ref.contextId);
    for (const decision of decisions) {
      if (
        !pending.some((approval) => approval.toolCallId === decision.toolCallId && approval.run === view.run)
      )
        throw invalidParams(`task ${taskId} waits for no decision on ${JSON.stringify(decision.toolCallId)}`);
    }
    for (const { kind: _kind, toolCallId, ...body } of decisions) {
      const reason = body.reason ?? (text || undefined);
      await decideAs(a2a.deps, token, ref.contextId, toolCallId, { ...body, ...(reason ? { reason } : {}) });
    }
    a2a.metrics.messageTaken('decision');
    return taken;
  }
  if (!text) throw invalidParams('the message has no text and no decision');
  if (view.run === undefined) {
    throw unsupported(
      `task ${taskId} has not started (its message waits for the run in progress): cancel it or wait`,
    );
  }
  await a2a.deps.agent.steer(ref.contextId, text, {
    messageId: conversationMessageId(token, message.messageId),
    sender: token.name,
  });
  a2a.metrics.messageTaken('steer');
  return taken;
}

/** The token may take `action` on the task's conversation; one that does not exist is no task. */
export async function authorizeOnTask(
  a2a: A2AContext,
  token: GatewayToken,
  action: 'status' | 'events' | 'approve' | 'steer' | 'abort',
  ref: TaskRef,
): Promise<void> {
  try {
    await a2a.access.authorizeOn(token, action, ref.contextId);
  } catch (error) {
    if (error instanceof ConversationNotFoundError) throw taskNotFound(ref.taskId);
    throw error;
  }
}
