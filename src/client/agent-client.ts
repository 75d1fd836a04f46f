import { randomUUID } from 'node:crypto';
import { type Client, WorkflowNotFoundError, defaultPayloadConverter } from '@temporalio/client';
import { CONVERSATION_WORKFLOW_TYPE, DEFAULT_TASK_QUEUE } from '../shared/constants';
import {
  type ConversationState,
  type ConversationStatusSummary,
  UserMessageInputSchema,
  endSignal,
  eventsQuery,
  stateQuery,
  statusQuery,
  userMessageSignal,
} from '../shared/conversation-api';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import type { AgentEvent } from '../shared/events';
import { assertConversationId } from '../shared/ids';
import type { ActivityProgress } from '../shared/tool-run';

export interface SendOptions {
  /** Used only when this message starts the conversation. */
  options?: ConversationOptionsInput;
  messageId?: string;
}

export interface Sent {
  conversationId: string;
  messageId: string;
  /** Events up to here came before this message. */
  afterSeq: number;
}

export type FollowItem =
  { kind: 'event'; event: AgentEvent } | { kind: 'progress'; progress: ActivityProgress };

/** The typed way for a service to talk to conversations; everything goes through Temporal. */
export class AgentClient {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string = DEFAULT_TASK_QUEUE,
  ) {}

  /** Sends a user message, starting the conversation if it is not running. Refuses an ended conversation. */
  async send(conversationId: string, text: string, sendOptions: SendOptions = {}): Promise<Sent> {
    assertConversationId(conversationId);
    const message = UserMessageInputSchema.parse({ text, messageId: sendOptions.messageId ?? randomUUID() });
    const options = ConversationOptionsSchema.parse(sendOptions.options ?? {});
    const handle = this.client.workflow.getHandle(conversationId);
    let afterSeq = 0;
    try {
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') {
        throw new Error(
          `conversation ${conversationId} has ended (${description.status.name.toLowerCase()}); start a new one`,
        );
      }
      afterSeq = (await handle.query(statusQuery)).lastSeq;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    await this.client.workflow.signalWithStart(CONVERSATION_WORKFLOW_TYPE, {
      workflowId: conversationId,
      taskQueue: this.taskQueue,
      args: [{ options }],
      signal: userMessageSignal,
      signalArgs: [message],
    });
    return { conversationId, messageId: message.messageId, afterSeq };
  }

  status(conversationId: string): Promise<ConversationStatusSummary> {
    return this.client.workflow.getHandle(conversationId).query(statusQuery);
  }

  state(conversationId: string): Promise<ConversationState> {
    return this.client.workflow.getHandle(conversationId).query(stateQuery);
  }

  events(conversationId: string, afterSeq = 0): Promise<AgentEvent[]> {
    return this.client.workflow.getHandle(conversationId).query(eventsQuery, afterSeq);
  }

  async end(conversationId: string, reason?: string): Promise<void> {
    await this.client.workflow.getHandle(conversationId).signal(endSignal, { reason });
  }

  /**
   * Events after `afterSeq` and the heartbeated progress of running tools and model calls, until
   * the run that took `messageId` finishes. Queries and describe() add nothing to history.
   */
  async *follow(
    sent: Sent,
    pollMs = 200,
  ): AsyncGenerator<FollowItem, Extract<AgentEvent, { type: 'run_finished' }>> {
    const handle = this.client.workflow.getHandle(sent.conversationId);
    let afterSeq = sent.afterSeq;
    const lastProgress = new Map<string, string>();
    for (;;) {
      const events = await handle.query(eventsQuery, afterSeq);
      for (const event of events) {
        afterSeq = event.seq;
        yield { kind: 'event', event };
        if (event.type === 'run_finished' && event.messageIds.includes(sent.messageId)) return event;
      }
      const description = await handle.describe();
      if (description.status.name !== 'RUNNING') {
        throw new Error(
          `conversation ${sent.conversationId} ${description.status.name.toLowerCase()} before answering`,
        );
      }
      for (const activity of description.raw.pendingActivities ?? []) {
        const payload = activity.heartbeatDetails?.payloads?.[0];
        if (!payload || !activity.activityId) continue;
        const progress = defaultPayloadConverter.fromPayload<ActivityProgress>(payload);
        const key = JSON.stringify(progress);
        if (lastProgress.get(activity.activityId) === key) continue;
        lastProgress.set(activity.activityId, key);
        yield { kind: 'progress', progress };
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}
