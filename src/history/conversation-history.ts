import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { assertConversationId } from '../shared/ids';
import type { ExecutionHistory } from './build-timeline';
import { ConversationNotFoundError } from '../shared/conversation-errors';

/**
 * The histories of a conversation's executions, oldest first: the current one and, following each
 * start event's `continuedExecutionRunId`, those it continued as new from. Read straight from each
 * run (never from visibility, which lags), payloads as stored, codecs not applied. `latest` keeps
 * only that many of the newest executions.
 */
export async function fetchConversationHistories(
  client: Client,
  conversationId: string,
  {
    latest = Infinity,
  }: {
    /** Only this many of the newest executions; all when absent. */
    latest?: number;
  } = {},
): Promise<ExecutionHistory[]> {
  assertConversationId(conversationId);
  let runId: string | undefined;
  try {
    runId = (await client.workflow.getHandle(conversationId).describe()).runId;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(conversationId);
    throw error;
  }
  const executions: ExecutionHistory[] = [];
  while (runId && executions.length < latest) {
    const history = await client.workflow.getHandle(conversationId, runId).fetchHistory();
    executions.unshift({ runId, history });
    runId =
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return executions;
}
