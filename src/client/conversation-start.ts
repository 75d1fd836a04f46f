// Starting a conversation that waits for its first message (`start`, `startCarried`); a `send` that
// starts one passes `assertClientStart` too.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import {
  type ConversationOptions,
  type ConversationOptionsInput,
  ConversationOptionsSchema,
} from '../shared/conversation-options';
import { ConversationExistsError, InvalidInputError, invalidInput } from '../shared/conversation-errors';
import { conversationFairnessKey } from '../shared/fairness-key';
import { assertConversationId } from '../shared/ids';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ClientContext } from './client-context';
import { SEND_RETRY_MS, describeWhileUnreachable, whileUnreachable } from './query-retry';

/** Options of `AgentClient.start`. */
export interface StartOptions {
  /**
   * What names this start request (a digest of it, chosen by the caller; at most 128 characters),
   * kept with the conversation: a start repeated with the same key is answered as done, so a caller
   * may retry one whose answer it never got.
   */
  requestKey?: string;
}

/** Where a conversation keeps the key of the request that started it. */
const START_REQUEST_MEMO = 'startRequest';

export async function start(
  context: ClientContext,
  conversationId: string,
  options: ConversationOptionsInput,
  { requestKey }: StartOptions = {},
): Promise<string> {
  if (requestKey !== undefined && (requestKey.length === 0 || requestKey.length > 128)) {
    throw new InvalidInputError('start request key', ['it is 1 to 128 characters']);
  }
  const input = { options: startOptions(conversationId, options) };
  const attempt = () => startWorkflow(context, conversationId, input, requestKey);
  try {
    // With a key a start may reach the server twice: the second finds its own key.
    await (requestKey === undefined ? attempt() : whileUnreachable(attempt, { withinMs: SEND_RETRY_MS }));
  } catch (error) {
    if (!(error instanceof ConversationExistsError) || requestKey === undefined) throw error;
    const { memo } = await describeWhileUnreachable(context.handle(conversationId));
    if (memo?.[START_REQUEST_MEMO] !== requestKey) throw error;
  }
  return conversationId;
}

export async function startCarried(
  context: ClientContext,
  conversationId: string,
  options: ConversationOptionsInput,
  carried: Record<string, unknown>,
): Promise<string> {
  await startWorkflow(context, conversationId, { options: startOptions(conversationId, options), carried });
  return conversationId;
}

/**
 * What a client may not start a conversation with, said before the worker refuses it: a place in a
 * tree of sub-agents, which only Temporal's parent links give a conversation.
 */
export function assertClientStart(conversationId: string, options: ConversationOptionsInput): void {
  if (options.ancestors !== undefined) {
    throw new InvalidInputError('conversation options', [
      "ancestors is set by the runtime for a sub-agent's conversation, never by a client",
    ]);
  }
  if (conversationId.includes('.sub-')) {
    throw new InvalidInputError(`conversation id ${JSON.stringify(conversationId)}`, [
      'ids with ".sub-" belong to sub-agents, which only their parent conversation starts',
    ]);
  }
}

/** The options a client starts `conversationId` with, once the id and the options pass every check. */
function startOptions(conversationId: string, options: ConversationOptionsInput): ConversationOptions {
  assertConversationId(conversationId);
  assertClientStart(conversationId, options);
  const parsed = ConversationOptionsSchema.safeParse(options);
  if (!parsed.success) throw invalidInput('conversation options', parsed.error);
  return parsed.data;
}

async function startWorkflow(
  context: ClientContext,
  conversationId: string,
  input: { options: ConversationOptions; carried?: Record<string, unknown> },
  requestKey?: string,
): Promise<void> {
  try {
    await context.client.workflow.start(CONVERSATION_WORKFLOW_TYPE, {
      workflowId: conversationId,
      taskQueue: context.taskQueue,
      args: [input],
      ...(requestKey !== undefined ? { memo: { [START_REQUEST_MEMO]: requestKey } } : {}),
      // A conversation id names one conversation forever, so events and transcripts never mix.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      priority: {
        fairnessKey: conversationFairnessKey(conversationId, input.options.agentId),
      },
    });
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError)
      throw new ConversationExistsError(conversationId);
    throw error;
  }
}
