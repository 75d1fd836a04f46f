import type { AgentClient } from '../../client/agent-client';
import type { A2AMessageOut } from '../../shared/a2a';
import { ConversationNotFoundError } from '../../shared/conversation-errors';
import { taskNotFound } from './a2a-errors';
import { type TaskRef, agentMessage } from '../../shared/a2a-task-parts';
import { type TaskView, taskView } from './a2a-task-view';

/** How far back in the transcript a task's own messages are looked for. */
const HISTORY_LOOKBACK_MESSAGES = 200;

/**
 * The task as Temporal holds it now: the conversation's receipt for the task's message, its events
 * since, the approvals pending. TaskNotFound when the conversation took no such message.
 */
export async function readTask(
  agent: AgentClient,
  ref: TaskRef,
  options: { historyLength?: number | undefined } = {},
): Promise<TaskView> {
  const { contextId, messageId } = ref;
  try {
    const receipt = await agent.messageReceipt(contextId, messageId);
    if (!receipt) throw taskNotFound(ref.taskId);
    const [execution, status, events, pending] = await Promise.all([
      agent.execution(contextId),
      agent.status(contextId),
      agent.events(contextId, receipt.afterSeq),
      agent.pendingApprovals(contextId),
    ]);
    const ended = execution.executionStatus !== 'RUNNING' || status.status === 'ended';
    const facts = { ref, receipt, events, pending, ended, now: Date.now() };
    const view = taskView(facts);
    if (options.historyLength === 0) return view;
    const history = await historyOf(agent, ref, view);
    const kept = options.historyLength === undefined ? history : history.slice(-options.historyLength);
    return kept.length ? { ...view, task: { ...view.task, history: kept } } : view;
  } catch (error) {
    if (error instanceof ConversationNotFoundError) throw taskNotFound(ref.taskId);
    throw error;
  }
}

/** The task's messages: the caller's (from the transcript's latest messages), then the answer. */
async function historyOf(agent: AgentClient, ref: TaskRef, view: TaskView): Promise<A2AMessageOut[]> {
  const { messages } = await agent.transcriptTail(ref.contextId, HISTORY_LOOKBACK_MESSAGES);
  const history: A2AMessageOut[] = messages
    .filter((message) => message.role === 'user' && message.messageId === ref.messageId)
    .map((message) => ({
      messageId: ref.messageId,
      contextId: ref.contextId,
      taskId: ref.taskId,
      role: 'ROLE_USER' as const,
      parts: [{ text: message.role === 'user' ? message.content : '', mediaType: 'text/plain' }],
    }));
  const end = view.task.status.message;
  if (view.finished && end) history.push(end);
  else if (view.finished?.answer) {
    history.push(agentMessage(ref, `end-${view.finished.run}`, [{ text: view.finished.answer }]));
  }
  return history;
}
