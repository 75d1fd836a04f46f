import {
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  executeChild,
  isCancellation,
} from '@temporalio/workflow';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import type { ConversationOptions, ConversationOptionsInput } from '../shared/conversation-options';
import type { ToolCall } from '../shared/messages';
import { MAX_SUB_AGENT_DEPTH, SpawnArgumentsSchema, subAgentId } from '../shared/sub-agents';
import { type ToolOutcome, toolErrorOutcome } from '../shared/tool-errors';
import type { EventLog } from './event-log';

export interface SubAgentContext {
  conversationId: string;
  run: number;
  options: ConversationOptions;
  events: EventLog;
}

/** What a finished conversation reports; a sub-agent's answer is its last run's. */
export interface SubAgentResult {
  answer?: string;
  outcome?: 'answered' | 'max_tool_iterations' | 'error' | 'aborted';
}

/**
 * Runs a `sessions_spawn` call: a child conversation with the task as its first message, the
 * parent's settings and the profile asked for, which ends after that run. Its answer is the tool
 * result. Cancelling the call (steer, abort) cancels the child; so does the parent closing.
 */
export async function runSubAgent(
  call: ToolCall,
  args: Record<string, unknown>,
  context: SubAgentContext,
): Promise<ToolOutcome> {
  const parsed = SpawnArgumentsSchema.safeParse(args);
  if (!parsed.success) return toolErrorOutcome(call.name, 'InvalidArgs', parsed.error.message);
  const ancestors = [...(context.options.ancestors ?? []), context.conversationId];
  if (ancestors.length > MAX_SUB_AGENT_DEPTH) {
    return toolErrorOutcome(
      call.name,
      'PermissionDenied',
      `sub-agents may nest ${MAX_SUB_AGENT_DEPTH} deep at most; this conversation is ${ancestors.length - 1} deep`,
    );
  }
  const childId = subAgentId(context.conversationId, call.id);
  const { task, profile } = parsed.data;
  context.events.record(context.run, {
    type: 'subagent_started',
    toolCallId: call.id,
    conversationId: childId,
    task: task.slice(0, 2_000),
  });
  const parent = context.options;
  const options: ConversationOptionsInput = {
    ...(parent.model !== undefined ? { model: parent.model } : {}),
    ...(parent.systemPrompt !== undefined ? { systemPrompt: parent.systemPrompt } : {}),
    ...(parent.workspace !== undefined ? { workspace: parent.workspace } : {}),
    ...(parent.agentId !== undefined ? { agentId: parent.agentId } : {}),
    ...(parent.execSecurity !== undefined ? { execSecurity: parent.execSecurity } : {}),
    maxToolIterations: parent.maxToolIterations,
    approval: parent.approval,
    compaction: parent.compaction,
    ...((profile ?? parent.profile) !== undefined ? { profile: profile ?? parent.profile } : {}),
    ...(parent.deny !== undefined ? { deny: parent.deny } : {}),
    endAfterFirstRun: true,
    ancestors,
  };
  try {
    const result = await executeChild<(input: unknown) => Promise<SubAgentResult>>(
      CONVERSATION_WORKFLOW_TYPE,
      {
        workflowId: childId,
        args: [{ options, initialMessage: { text: task, messageId: `${call.id}-task` } }],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      },
    );
    if (result.outcome === 'answered') {
      return {
        content: [{ type: 'text', text: result.answer || '(the sub-agent gave an empty answer)' }],
        isError: false,
        details: { conversationId: childId },
      };
    }
    return toolErrorOutcome(
      call.name,
      'ExecutionFailed',
      `the sub-agent (${childId}) ended without an answer (${result.outcome ?? 'unknown'}); its events say why`,
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    return toolErrorOutcome(
      call.name,
      'ExecutionFailed',
      `the sub-agent (${childId}) failed: ${(error as Error).message}`,
    );
  }
}
