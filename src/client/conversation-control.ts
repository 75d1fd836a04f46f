// Controlling a conversation by update or signal: abort, approve, answer a choice, set the approval
// mode, compact, end. Every input is checked here first, so a bad one never reaches the workflow.
import type { UpdateDefinition } from '@temporalio/client';
import type { z } from 'zod';
import { A2APushConfigChangeSchema, a2aPushConfigUpdate } from '../shared/a2a-push';
import { ApprovalDecisionSchema } from '../shared/approvals';
import {
  type ClientToolReceipt,
  type ClientToolResult,
  ClientToolResultSchema,
} from '../shared/client-tools';
import type { CompactionReceipt } from '../shared/compaction';
import {
  AbortInputSchema,
  ApprovalModeInputSchema,
  abortUpdate,
  answerUserChoiceUpdate,
  approveUpdate,
  clientToolResultUpdate,
  compactUpdate,
  endSignal,
  setApprovalModeUpdate,
} from '../shared/conversation-api';
import { invalidInput } from '../shared/conversation-errors';
import { UserChoiceAnswerSchema } from '../shared/rap';
import type { ClientContext } from './client-context';

export const abort = checkedUpdate(abortUpdate, 'abort', AbortInputSchema);
export const approve = checkedUpdate(approveUpdate, 'approval decision', ApprovalDecisionSchema);
export const answerUserChoice = checkedUpdate(answerUserChoiceUpdate, 'user choice', UserChoiceAnswerSchema);
export const setApprovalMode = checkedUpdate(setApprovalModeUpdate, 'approval mode', ApprovalModeInputSchema);
export const changeA2APushConfig = checkedUpdate(
  a2aPushConfigUpdate,
  'push notification config',
  A2APushConfigChangeSchema,
);

/**
 * A client tool's result, under an update id of its call's: a repeat of it within the execution is
 * answered as the first was, and the validator refuses a call that no longer waits.
 */
export async function answerClientTool(
  context: ClientContext,
  conversationId: string,
  result: ClientToolResult,
): Promise<ClientToolReceipt> {
  const parsed = ClientToolResultSchema.safeParse(result);
  if (!parsed.success) throw invalidInput('client tool result', parsed.error);
  return context.update(conversationId, clientToolResultUpdate.name, () =>
    context.handle(conversationId).executeUpdate(clientToolResultUpdate, {
      args: [parsed.data],
      updateId: `client-tool-result-${parsed.data.toolCallId}`,
    }),
  );
}

export async function compact(context: ClientContext, conversationId: string): Promise<CompactionReceipt> {
  const handle = context.handle(conversationId);
  return context.update(conversationId, compactUpdate.name, () => handle.executeUpdate(compactUpdate));
}

export async function end(context: ClientContext, conversationId: string, reason?: string): Promise<void> {
  await context.explainErrors(conversationId, () =>
    context.handle(conversationId).signal(endSignal, { reason }),
  );
}

/**
 * Runs `update` with its one argument once `schema` takes it (else InvalidInputError naming `what`);
 * the workflow's refusal is UpdateRefusedError named after the update.
 */
function checkedUpdate<Input, Result>(
  update: UpdateDefinition<Result, [Input]>,
  what: string,
  schema: z.ZodType<Input>,
): (context: ClientContext, conversationId: string, input: Input) => Promise<Result> {
  return async (context, conversationId, input) => {
    const parsed = schema.safeParse(input);
    if (!parsed.success) throw invalidInput(what, parsed.error);
    return context.update(conversationId, update.name, () =>
      context.handle(conversationId).executeUpdate(update, { args: [parsed.data] }),
    );
  };
}
