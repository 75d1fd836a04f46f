// A user message into a conversation: sent (starting the conversation when it may), steering the
// run in progress, or a plain signal to one that runs; each says where following its run begins.
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { conversationSummary } from '../shared/activity-summary';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import type { ImageContent } from '../shared/content';
import {
  type SteerReceipt,
  type UserMessageInput,
  UserMessageInputSchema,
  statusQuery,
  steerSignal,
  steerUpdate,
  userMessageSignal,
} from '../shared/conversation-api';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  invalidInput,
} from '../shared/conversation-errors';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import { conversationFairnessKey } from '../shared/fairness-key';
import { assertConversationId } from '../shared/ids';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ClientContext } from './client-context';
import { execution } from './conversation-execution';
import { status } from './conversation-reads';
import { assertClientStart } from './conversation-start';
import { SEND_QUERY_RETRY_MS } from './query-retry';

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
  const message = UserMessageInputSchema.safeParse({
    text,
    messageId: sendOptions.messageId ?? randomUUID(),
    ...(sendOptions.sender !== undefined ? { sender: sendOptions.sender } : {}),
    ...(sendOptions.images?.length ? { images: sendOptions.images } : {}),
  });
  if (!message.success) throw invalidInput('message', message.error);
  const options = ConversationOptionsSchema.safeParse(sendOptions.options ?? {});
  if (!options.success) throw invalidInput('conversation options', options.error);
  let afterSeq = 0;
  let afterRun = 0;
  let started = true;
  try {
    await context.assertRunning(conversationId);
    ({ lastSeq: afterSeq, runCount: afterRun } = await context.readWithin(
      SEND_QUERY_RETRY_MS,
      conversationId,
      statusQuery,
    ));
    started = false;
  } catch (error) {
    if (!(error instanceof ConversationNotFoundError) || sendOptions.start === false) throw error;
  }
  if (started && sendOptions.start !== false) assertClientStart(conversationId, sendOptions.options ?? {});
  if (sendOptions.start === false) {
    // A plain signal: it can never start a workflow, even if this one closed since we looked.
    const handle = context.handle(conversationId);
    await context.explainErrors(conversationId, () => handle.signal(userMessageSignal, message.data));
    return { conversationId, messageId: message.data.messageId, afterSeq, afterRun, started: false };
  }
  await context.client.workflow.signalWithStart(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: conversationId,
    taskQueue: context.taskQueue,
    args: [{ options: options.data }],
    signal: userMessageSignal,
    signalArgs: [message.data],
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
    priority: { fairnessKey: conversationFairnessKey(conversationId, options.data.agentId) },
    // Shown by the Web UI for the conversation; only used when this call starts it.
    staticSummary: conversationSummary(text),
  });
  return { conversationId, messageId: message.data.messageId, afterSeq, afterRun, started };
}

export async function steer(
  context: ClientContext,
  conversationId: string,
  text: string,
  steerOptions: SteerOptions,
): Promise<Steered> {
  const message = UserMessageInputSchema.safeParse({
    text,
    messageId: steerOptions.messageId ?? randomUUID(),
    ...(steerOptions.sender !== undefined ? { sender: steerOptions.sender } : {}),
  });
  if (!message.success) throw invalidInput('steering message', message.error);
  await context.assertRunning(conversationId);
  const { lastSeq, runCount } = await status(context, conversationId);
  const handle = context.handle(conversationId);
  // The run in progress may be the one it joins.
  const afterRun = Math.max(0, runCount - 1);
  const sent = {
    conversationId,
    messageId: message.data.messageId,
    afterSeq: lastSeq,
    afterRun,
    started: false,
  };
  if (steerOptions.wait === false) {
    await context.explainErrors(conversationId, () => handle.signal(steerSignal, message.data));
    return sent;
  }
  const receipt: SteerReceipt = await context.update(conversationId, 'steer', () =>
    handle.executeUpdate(steerUpdate, { args: [message.data] }),
  );
  return { ...sent, interrupting: receipt.interrupting };
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
