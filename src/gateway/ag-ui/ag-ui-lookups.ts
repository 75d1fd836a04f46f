import type { AgentClient } from '../../client/agent-client';
import { type AssistantMessage, toolCallsOf, textOf } from '../../shared/messages';
import type { AgUiLookups } from './ag-ui-translator';

/** Messages read back to find the assistant message a `model_response` event stands for. */
const TAIL_MESSAGES = 64;

/**
 * What the AG-UI translation reads of one conversation, through the client library (queries only),
 * one query after the other: a server buffers one query while the workflow's task runs (Temporal's
 * default) and refuses the others, which are asked again after a backoff of a second or more.
 */
export function agUiLookups(agent: AgentClient, conversationId: string): AgUiLookups {
  const waiting = async () => {
    const approvals = await agent.pendingApprovals(conversationId);
    const clientCalls = await agent.pendingClientToolCalls(conversationId);
    return { approvals, clientCalls };
  };
  return {
    waiting,
    async assistantMessage(event) {
      const { messages } = await agent.transcriptTail(conversationId, TAIL_MESSAGES);
      const ids = event.toolCalls.map((call) => call.id).join('\n');
      for (let index = messages.length - 1; index >= 0; index--) {
        const message = messages[index]!;
        if (message.role !== 'assistant') continue;
        const calls = toolCallsOf(message as AssistantMessage);
        if (
          ids
            ? calls.map((call) => call.id).join('\n') === ids
            : calls.length === 0 && textOf(message as AssistantMessage).startsWith(event.text)
        )
          return message as AssistantMessage;
      }
      return undefined;
    },
    async snapshot() {
      const status = await agent.status(conversationId);
      const { approvals, clientCalls } = await waiting();
      return {
        conversationId,
        status: status.status,
        pendingApprovals: approvals.map((approval) => ({
          toolCallId: approval.toolCallId,
          toolName: approval.toolName,
          arguments: approval.arguments,
          argumentsSha256: approval.argumentsSha256,
          risk: approval.risk,
          ...(approval.expiresAt !== undefined
            ? { expiresAt: new Date(approval.expiresAt).toISOString() }
            : {}),
        })),
        pendingClientToolCalls: clientCalls.map(({ toolCallId, toolName, arguments: args }) => ({
          toolCallId,
          toolName,
          arguments: args,
        })),
        budget: status.budget?.limits ?? null,
        spent: status.budget?.used ?? null,
      };
    },
  };
}
