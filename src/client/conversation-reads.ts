// Reading a conversation by asking its workflow (queries): its status, state, events, approvals
// waiting, views and transcript; and an agent's spending today, from its daily ledger.
import { QueryNotRegisteredError, WorkflowNotFoundError } from '@temporalio/client';
import { type A2APushConfig, a2aPushConfigsQuery } from '../shared/a2a-push';
import type { PendingApproval } from '../shared/approvals';
import type { PendingClientToolCall } from '../shared/client-tools';
import {
  type ConversationState,
  type ConversationStatusSummary,
  type MessageReceipt,
  type TranscriptPage,
  eventsQuery,
  messageReceiptQuery,
  pendingApprovalsQuery,
  pendingClientToolCallsQuery,
  rapViewsQuery,
  stateQuery,
  statusQuery,
  transcriptPageQuery,
} from '../shared/conversation-api';
import {
  type DailySpent,
  agentDailyBudgetStatusQuery,
  agentDailyBudgetWorkflowId,
  utcDayOf,
} from '../shared/daily-budget';
import type { AgentEvent } from '../shared/events';
import type { Message } from '../shared/messages';
import type { ClientContext } from './client-context';

export function status(context: ClientContext, conversationId: string): Promise<ConversationStatusSummary> {
  return context.explainErrors(conversationId, () => context.read(conversationId, statusQuery));
}

export function state(context: ClientContext, conversationId: string): Promise<ConversationState> {
  return context.explainErrors(conversationId, () => context.read(conversationId, stateQuery));
}

export function pendingApprovals(context: ClientContext, conversationId: string): Promise<PendingApproval[]> {
  return context.explainErrors(conversationId, () => context.read(conversationId, pendingApprovalsQuery));
}

/** The client tool calls that wait for their sender's result; none from workers that have no client tools. */
export function pendingClientToolCalls(
  context: ClientContext,
  conversationId: string,
): Promise<PendingClientToolCall[]> {
  return context.explainErrors(conversationId, () =>
    context.read(conversationId, pendingClientToolCallsQuery).catch((error: unknown) => {
      if (error instanceof QueryNotRegisteredError) return [];
      throw error;
    }),
  );
}

export function events(
  context: ClientContext,
  conversationId: string,
  afterSeq: number,
): Promise<AgentEvent[]> {
  return context.explainErrors(conversationId, () => context.read(conversationId, eventsQuery, afterSeq));
}

export async function messageReceipt(
  context: ClientContext,
  conversationId: string,
  messageId: string,
): Promise<MessageReceipt | null> {
  try {
    return await context.explainErrors(conversationId, () =>
      context.read(conversationId, messageReceiptQuery, messageId),
    );
  } catch (error) {
    // Workers from before receipts keep none.
    if (error instanceof QueryNotRegisteredError) return null;
    throw error;
  }
}

/** A task's A2A push notification configurations set by `owner`. */
export function a2aPushConfigs(
  context: ClientContext,
  conversationId: string,
  target: { messageId: string; owner: string },
): Promise<A2APushConfig[]> {
  return context.explainErrors(conversationId, () =>
    context.read(conversationId, a2aPushConfigsQuery, target),
  );
}

export function views(
  context: ClientContext,
  conversationId: string,
): Promise<Record<string, Record<string, unknown>>> {
  return context.explainErrors(conversationId, () => context.handle(conversationId).query(rapViewsQuery));
}

export async function transcriptTail(
  context: ClientContext,
  conversationId: string,
  last: number,
): Promise<{ transcriptLength: number; from: number; messages: Message[] }> {
  const handle = context.handle(conversationId);
  const { transcriptLength, transcriptGeneration = 0 } = await status(context, conversationId);
  const from = Math.max(0, transcriptLength - last);
  const messages: Message[] = [];
  let next: number | null = from;
  while (next !== null && next < transcriptLength) {
    const page: TranscriptPage = await handle.query(transcriptPageQuery, {
      generation: transcriptGeneration,
      from: next,
      to: transcriptLength,
    });
    messages.push(...page.messages);
    next = page.next;
  }
  return { transcriptLength, from, messages };
}

export async function agentSpentToday(
  context: ClientContext,
  agentId: string,
  now: number,
): Promise<DailySpent> {
  const day = utcDayOf(now);
  try {
    return await context.client.workflow
      .getHandle(agentDailyBudgetWorkflowId(agentId, day))
      .query(agentDailyBudgetStatusQuery);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return { agentId, day, tokens: 0 };
    throw error;
  }
}
