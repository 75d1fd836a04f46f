// A user message into a conversation: sent (starting the conversation when it may), steering the
// run in progress, or a plain signal to one that runs; each says where following its run begins.
import { randomUUID } from 'node:crypto';
import { QueryNotRegisteredError, WorkflowNotFoundError } from '@temporalio/client';
import { conversationSummary } from '../shared/activity-summary';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import type { ClientTool } from '../shared/client-tools';
import type { ImageContent } from '../shared/content';
import {
  type SteerReceipt,
  type UserMessageInput,
  UserMessageInputSchema,
  messageReceiptQuery,
  statusQuery,
  steerSignal,
  steerUpdate,
  userMessageSignal,
} from '../shared/conversation-api';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  MessageIdConflictError,
  invalidInput,
} from '../shared/conversation-errors';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import { conversationFairnessKey } from '../shared/fairness-key';
import { assertConversationId } from '../shared/ids';
import { messageFingerprint } from '../shared/message-fingerprint';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ClientContext } from './client-context';
import { execution } from './conversation-execution';
import { status } from './conversation-reads';
import { assertClientStart } from './conversation-start';
import { SEND_QUERY_RETRY_MS, SEND_RETRY_MS, whileUnreachable } from './query-retry';

/** Options of `AgentClient.send`. */
export interface SendOptions {
  /**
   * True (the default): a conversation that does not exist is started by this message. False: only
   * a conversation that exists takes it; otherwise ConversationNotFoundError and nothing is started
   * (what a caller allowed to send but not to start needs).
   */
  start?: boolean;
  /** Used only when this message starts the conversation. */
  options?: ConversationOptionsInput;
  /** The message's id, unique in the conversation; a new UUID when absent. */
  messageId?: string;
  /** Who sends it, as this caller vouches: decides whether `ownerOnly` tools may run (the conversation's `owners`). */
  sender?: string;
  /** Images the model sees with the text (at most MAX_MESSAGE_IMAGES). */
  images?: ImageContent[];
  /**
   * Tools the sender carries out itself, offered to the model for the run that takes the message;
   * their calls wait for `answerClientTool` (see client-tools.ts).
   */
  clientTools?: ClientTool[];
}

/** What `AgentClient.send` returns: where the message went and the events before it. */
export interface Sent {
  /** The conversation the message went to. */
  conversationId: string;
  /** The message's id: the one given, or a new one. */
  messageId: string;
  /** Events up to here came before this message. */
  afterSeq: number;
  /** Runs numbered up to here did not take this message (they began before it was sent). */
  afterRun: number;
  /** True when this message started the conversation. */
  started: boolean;
  /**
   * True when the conversation had taken a message with this id (this one retried): it was not
   * taken again, and where to follow its run is where the first delivery stood.
   */
  duplicate?: boolean;
}

/** Options of `AgentClient.steer`. */
export interface SteerOptions {
  /** The steering message's id, unique in the conversation; a new UUID when absent. */
  messageId?: string;
  /** As for `send`: a steering message joins the run, and a non-owner's makes it a non-owner's run. */
  sender?: string;
  /**
   * True (the default): the `steer` update, which waits for a worker to take the message and
   * returns whether a run was interrupted. False: the `steer` signal, which is stored even while no
   * worker is running and returns no receipt.
   */
  wait?: boolean;
}

/** What `AgentClient.steer` returns: `Sent`, and whether a run was interrupted. */
export interface Steered extends Sent {
  /** From the update's receipt: a run was in progress and is being steered. Absent with `wait: false`. */
  interrupting?: boolean;
}

export async function send(
  context: ClientContext,
  conversationId: string,
  text: string,
  sendOptions: SendOptions,
): Promise<Sent> {
  assertConversationId(conversationId);
  const message = checkedMessage('message', text, sendOptions);
  const options = ConversationOptionsSchema.safeParse(sendOptions.options ?? {});
  if (!options.success) throw invalidInput('conversation options', options.error);
  const place = await whereItStands(context, conversationId, sendOptions.start !== false);
  const sent = { conversationId, messageId: message.messageId, ...place };
  // Only an id the caller chose can be a retry of an earlier delivery.
  if (!place.started && sendOptions.messageId !== undefined) {
    const earlier = await earlierDelivery(context, conversationId, message);
    if (earlier) return { ...sent, ...earlier, duplicate: true };
  }
  if (place.started) assertClientStart(conversationId, sendOptions.options ?? {});
  const handle = context.handle(conversationId);
  await whileUnreachable<unknown>(
    () =>
      sendOptions.start === false
        ? // A plain signal: it can never start a workflow, even if this one closed since we looked.
          context.explainErrors(conversationId, () => handle.signal(userMessageSignal, message))
        : context.client.workflow.signalWithStart(CONVERSATION_WORKFLOW_TYPE, {
            workflowId: conversationId,
            taskQueue: context.taskQueue,
            args: [{ options: options.data }],
            signal: userMessageSignal,
            signalArgs: [message],
            workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
            priority: { fairnessKey: conversationFairnessKey(conversationId, options.data.agentId) },
            // Shown by the Web UI for the conversation; only used when this call starts it.
            staticSummary: conversationSummary(text),
          }),
    { withinMs: SEND_RETRY_MS },
  );
  return sent;
}

/** The message as the conversation reads it, its id the caller's or a new one; InvalidInputError otherwise. */
function checkedMessage(
  what: string,
  text: string,
  options: Pick<SendOptions, 'messageId' | 'sender' | 'images' | 'clientTools'>,
): UserMessageInput {
  const message = UserMessageInputSchema.safeParse({
    text,
    messageId: options.messageId ?? randomUUID(),
    ...(options.sender !== undefined ? { sender: options.sender } : {}),
    ...(options.images?.length ? { images: options.images } : {}),
    ...(options.clientTools?.length ? { clientTools: options.clientTools } : {}),
  });
  if (!message.success) throw invalidInput(what, message.error);
  return message.data;
}

/**
 * Where a message sent now stands: after the events and runs the conversation has, or first in a
 * conversation it starts (when it may start one; otherwise ConversationNotFoundError).
 */
async function whereItStands(
  context: ClientContext,
  conversationId: string,
  mayStart: boolean,
): Promise<Pick<Sent, 'afterSeq' | 'afterRun' | 'started'>> {
  try {
    await context.assertRunning(conversationId);
    const { lastSeq, runCount } = await context.readWithin(SEND_QUERY_RETRY_MS, conversationId, statusQuery);
    return { afterSeq: lastSeq, afterRun: runCount, started: false };
  } catch (error) {
    if (!(error instanceof ConversationNotFoundError) || !mayStart) throw error;
    return { afterSeq: 0, afterRun: 0, started: true };
  }
}

/**
 * Where the conversation took this message before, when it did: a retry is answered as the first
 * delivery was and not sent again. MessageIdConflictError when the id was taken for another message.
 * Undefined from workers that keep no receipts (they take every delivery).
 */
async function earlierDelivery(
  context: ClientContext,
  conversationId: string,
  message: UserMessageInput,
): Promise<Pick<Sent, 'afterSeq' | 'afterRun'> | undefined> {
  const receipt = await context
    .readWithin(SEND_QUERY_RETRY_MS, conversationId, messageReceiptQuery, message.messageId)
    .catch((error: unknown) => {
      if (error instanceof QueryNotRegisteredError) return null;
      throw error;
    });
  if (!receipt) return undefined;
  if (receipt.fingerprint !== messageFingerprint(message)) {
    throw new MessageIdConflictError(conversationId, message.messageId);
  }
  return { afterSeq: receipt.afterSeq, afterRun: receipt.afterRun };
}

export async function steer(
  context: ClientContext,
  conversationId: string,
  text: string,
  steerOptions: SteerOptions,
): Promise<Steered> {
  const message = checkedMessage('steering message', text, steerOptions);
  await context.assertRunning(conversationId);
  const { lastSeq, runCount } = await status(context, conversationId);
  const handle = context.handle(conversationId);
  // The run in progress may be the one it joins.
  const afterRun = Math.max(0, runCount - 1);
  const sent = {
    conversationId,
    messageId: message.messageId,
    afterSeq: lastSeq,
    afterRun,
    started: false,
  };
  if (steerOptions.messageId !== undefined) {
    const earlier = await earlierDelivery(context, conversationId, message);
    if (earlier) return { ...sent, ...earlier, duplicate: true, interrupting: false };
  }
  if (steerOptions.wait === false) {
    await whileUnreachable(
      () => context.explainErrors(conversationId, () => handle.signal(steerSignal, message)),
      { withinMs: SEND_RETRY_MS },
    );
    return sent;
  }
  // The update's id is the message's: the server answers a repeat of it within this execution.
  const receipt: SteerReceipt = await context.update(conversationId, 'steer', () =>
    whileUnreachable(
      () => handle.executeUpdate(steerUpdate, { args: [message], updateId: `steer-${message.messageId}` }),
      { withinMs: SEND_RETRY_MS },
    ),
  );
  return { ...sent, interrupting: receipt.interrupting, ...(receipt.duplicate ? { duplicate: true } : {}) };
}

export async function signalMessage(
  context: ClientContext,
  conversationId: string,
  message: UserMessageInput,
): Promise<{ afterSeq: number; afterRun: number }> {
  const { executionStatus } = await execution(context, conversationId);
  if (executionStatus !== 'RUNNING') {
    throw new ConversationEndedError(conversationId, executionStatus.toLowerCase());
  }
  const handle = context.handle(conversationId);
  const { lastSeq, runCount } = await handle.query(statusQuery);
  try {
    await handle.signal(userMessageSignal, message);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw new ConversationEndedError(conversationId, 'ended');
    throw error;
  }
  return { afterSeq: lastSeq, afterRun: runCount };
}
