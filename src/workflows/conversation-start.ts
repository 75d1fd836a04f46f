import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { type UserMessageInput, UserMessageInputSchema } from '../shared/conversation-api';
import { type ConversationOptions, ConversationOptionsSchema } from '../shared/conversation-options';
import { schemaProblems } from '../shared/schema-problems';
import { lineageProblem } from '../shared/sub-agents';
import { admissionActivities } from './activity-proxies';
import type { CarriedConversation, ConversationInput } from './conversation-carry';
import type { ConversationEntity } from './conversation-entity';
import type { InputParsing } from './input-parsing';

/** A conversation's start as checked: its options, and the prompt a scheduled conversation begins with. */
export interface CheckedStart {
  options: ConversationOptions;
  initialMessage?: UserMessageInput;
}

/**
 * The options and the initial message, read as this execution reads inputs, and the conversation's
 * place in a tree of sub-agents; throws (the conversation fails at once) when any of them is refused.
 */
export function checkedStart(input: ConversationInput, inputs: InputParsing): CheckedStart {
  const parsedOptions = inputs.safeParse(ConversationOptionsSchema, input.options ?? {});
  if (!parsedOptions.success) {
    throw ApplicationFailure.nonRetryable(
      `invalid conversation options: ${schemaProblems(parsedOptions.error)}`,
    );
  }
  const options = parsedOptions.data;
  // Before anything else: a place in a tree of sub-agents is Temporal's to say, not the client's.
  const info = workflowInfo();
  const lineage = lineageProblem(
    info.workflowId,
    options.ancestors,
    info.parent?.workflowId,
    info.root?.workflowId,
  );
  if (lineage) throw ApplicationFailure.nonRetryable(`refused: ${lineage}`, 'ConversationRefused');
  const initialMessage =
    input.initialMessage && inputs.safeParse(UserMessageInputSchema, input.initialMessage);
  if (initialMessage && !initialMessage.success) {
    throw ApplicationFailure.nonRetryable(`invalid initial message: ${schemaProblems(initialMessage.error)}`);
  }
  return { options, ...(initialMessage ? { initialMessage: initialMessage.data } : {}) };
}

/**
 * Before anything runs, the worker holds the options to its operator's floors; throws when it
 * refuses the conversation. Histories from before admission existed replay without it. True when
 * the worker has the conversation's search attributes registered.
 */
export async function admit(
  self: ConversationEntity,
  carried: CarriedConversation | undefined,
): Promise<boolean> {
  if (!patched('worker-admission')) return false;
  const { options } = self;
  const admission = await admissionActivities.admitConversation({
    ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
    ...(options.execSecurity !== undefined ? { execSecurity: options.execSecurity } : {}),
    approval: {
      ...(options.approval.mode !== undefined ? { mode: options.approval.mode } : {}),
      ...(options.approval.tools !== undefined ? { tools: options.approval.tools } : {}),
      ...(options.approval.approvers !== undefined ? { approvers: options.approval.approvers } : {}),
    },
    carried: Object.entries(carried ?? {}).flatMap(([part, value]) => (value === undefined ? [] : [part])),
    continued: workflowInfo().continuedFromExecutionRunId !== undefined,
    agentId: options.agentId ?? DEFAULT_AGENT_ID,
    ...(options.budget?.usd !== undefined
      ? { costBudget: options.model !== undefined ? { model: options.model } : {} }
      : {}),
  });
  if (!admission.admitted) throw ApplicationFailure.nonRetryable(admission.reason, 'ConversationRefused');
  self.admitted(admission);
  return admission.searchAttributes === true;
}
