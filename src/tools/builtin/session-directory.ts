import { Context } from '@temporalio/activity';
import { type Client, type WorkflowExecutionStatusName, WorkflowNotFoundError } from '@temporalio/client';
import { ConversationEndedError, ConversationNotFoundError } from '../../runtime/conversation-errors';
import { CONVERSATION_WORKFLOW_TYPE } from '../../shared/constants';
import {
  type ConversationStatusSummary,
  type TranscriptPage,
  type UserMessageInput,
  eventsQuery,
  statusQuery,
  transcriptPageQuery,
  userMessageSignal,
} from '../../shared/conversation-api';
import type { AgentEvent } from '../../shared/events';
import type { Message } from '../../shared/messages';

export interface SessionListing {
  sessionId: string;
  /** ISO 8601. */
  startTime: string;
}

export interface SessionStatus {
  sessionId: string;
  /** RUNNING while the conversation lasts; COMPLETED, TERMINATED, … once it has ended. */
  executionStatus: WorkflowExecutionStatusName;
  startTime: string;
  closeTime?: string;
  /** The conversation's own answer to the `status` query; only while it runs. */
  conversation?: ConversationStatusSummary;
}

export interface SessionHistory {
  transcriptLength: number;
  /** Index of the first message returned. */
  from: number;
  messages: Message[];
}

/**
 * Other conversations, as the sessions tools see them. Only conversations on the caller's own task
 * queue exist here: an id of anything else (another queue's conversation, a workflow of another
 * type) is not found. Unknown ids throw ConversationNotFoundError; sending to an ended one,
 * ConversationEndedError.
 */
export interface SessionDirectory {
  /** Open conversations, newest first as visibility returns them (which may lag a moment behind). */
  list(limit: number): Promise<SessionListing[]>;
  status(sessionId: string): Promise<SessionStatus>;
  /** The last `last` messages of the transcript. */
  history(sessionId: string, last: number): Promise<SessionHistory>;
  /** Signals a user message to a running conversation; never starts one. Returns the newest event's seq before it. */
  send(sessionId: string, message: UserMessageInput): Promise<{ afterSeq: number }>;
  /** Events recorded after `afterSeq`. */
  events(sessionId: string, afterSeq: number): Promise<AgentEvent[]>;
  /** The agent a conversation belongs to; undefined when it cannot say. */
  agentOf(sessionId: string): Promise<string | undefined>;
}

/**
 * Conversations are workflows: everything here is a Temporal describe, visibility list, query or
 * signal, made with the client of the activity that runs the tool (the worker's own connection).
 */
export class TemporalSessionDirectory implements SessionDirectory {
  /** `temporal` gives the client and task queue at call time; by default those of the running activity. */
  constructor(
    private readonly temporal: () => { client: Client; taskQueue: string } = () => {
      const context = Context.current();
      return { client: context.client, taskQueue: context.info.taskQueue };
    },
  ) {}

  async list(limit: number): Promise<SessionListing[]> {
    const { client, taskQueue } = this.temporal();
    const query = `WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue.replace(/'/g, "\\'")}'`;
    const sessions: SessionListing[] = [];
    for await (const execution of client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
      sessions.push({ sessionId: execution.workflowId, startTime: execution.startTime.toISOString() });
      if (sessions.length >= limit) break;
    }
    return sessions;
  }

  async status(sessionId: string): Promise<SessionStatus> {
    const description = await this.describe(sessionId);
    const status: SessionStatus = {
      sessionId,
      executionStatus: description.status.name,
      startTime: description.startTime.toISOString(),
      ...(description.closeTime ? { closeTime: description.closeTime.toISOString() } : {}),
    };
    if (description.status.name !== 'RUNNING') return status;
    const conversation = await this.handle(sessionId).query(statusQuery);
    return { ...status, conversation };
  }

  async history(sessionId: string, last: number): Promise<SessionHistory> {
    await this.describe(sessionId);
    const handle = this.handle(sessionId);
    const { transcriptLength, transcriptGeneration = 0 } = await handle.query(statusQuery);
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

  async send(sessionId: string, message: UserMessageInput): Promise<{ afterSeq: number }> {
    const description = await this.describe(sessionId);
    if (description.status.name !== 'RUNNING') {
      throw new ConversationEndedError(sessionId, description.status.name.toLowerCase());
    }
    const handle = this.handle(sessionId);
    const { lastSeq } = await handle.query(statusQuery);
    try {
      // A plain signal, not signal-with-start: a conversation that ended meanwhile is not started again.
      await handle.signal(userMessageSignal, message);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationEndedError(sessionId, 'ended');
      throw error;
    }
    return { afterSeq: lastSeq };
  }

  async agentOf(sessionId: string): Promise<string | undefined> {
    await this.describe(sessionId);
    // An ended conversation still answers queries (a worker replays it); undefined from a worker older
    // than the agent in the status, or when no worker can answer: its agent is unknown.
    return this.handle(sessionId)
      .query(statusQuery)
      .then(
        (status) => status.agentId,
        () => undefined,
      );
  }

  async events(sessionId: string, afterSeq: number): Promise<AgentEvent[]> {
    return this.handle(sessionId).query(eventsQuery, afterSeq);
  }

  private handle(sessionId: string) {
    return this.temporal().client.workflow.getHandle(sessionId);
  }

  private async describe(sessionId: string) {
    const { taskQueue } = this.temporal();
    let description;
    try {
      description = await this.handle(sessionId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationNotFoundError(sessionId);
      throw error;
    }
    if (description.type !== CONVERSATION_WORKFLOW_TYPE || description.taskQueue !== taskQueue) {
      throw new ConversationNotFoundError(sessionId);
    }
    return description;
  }
}
