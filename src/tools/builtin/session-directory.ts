import { Context } from '@temporalio/activity';
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { AgentClient } from '../../client/agent-client';
import { ConversationNotFoundError } from '../../shared/conversation-errors';
import { CONVERSATION_WORKFLOW_TYPE } from '../../shared/constants';
import type { ConversationStatusSummary, UserMessageInput } from '../../shared/conversation-api';
import type { RunEnd } from '../../client/run-end';
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
  /**
   * Signals a user message to a running conversation; never starts one. Returns the newest event's
   * seq before it and the runs that began before it.
   */
  send(sessionId: string, message: UserMessageInput): Promise<SentToSession>;
  /** How the run that takes a message sent ends (`AgentClient.followRun`), or `stopped` once `signal` is aborted. */
  runEnd(
    sessionId: string,
    sent: SentToSession & { messageId: string },
    signal: AbortSignal,
  ): Promise<RunEnd>;
  /**
   * Whose a conversation is: its agent and the conversation at the top of its tree of sub-agents
   * (each as the conversation itself vouches, from what Temporal told it); absent when it cannot say.
   */
  identityOf(sessionId: string): Promise<SessionIdentity>;
}

export interface SentToSession {
  afterSeq: number;
  afterRun: number;
}

/** Between two looks at the session whose answer is awaited. */
const ANSWER_POLL_MS = 500;

export interface SessionIdentity {
  agentId?: string;
  root?: string;
}

/**
 * The sessions as AgentClient sees them, made with the client of the activity that runs the tool
 * (the worker's own connection) on the activity's task queue; a workflow of another type or queue
 * is not a session.
 */
export class TemporalSessionDirectory implements SessionDirectory {
  /** `agent` gives the client at call time; by default one for the running activity's task queue. */
  constructor(
    private readonly agent: () => AgentClient = () => {
      const context = Context.current();
      return new AgentClient(context.client, context.info.taskQueue);
    },
  ) {}

  async list(limit: number): Promise<SessionListing[]> {
    const sessions: SessionListing[] = [];
    for await (const listing of this.agent().list()) {
      if (sessions.length >= limit) break;
      sessions.push({ sessionId: listing.conversationId, startTime: listing.startTime.toISOString() });
    }
    return sessions;
  }

  async status(sessionId: string): Promise<SessionStatus> {
    const agent = this.agent();
    const execution = await this.execution(agent, sessionId);
    const status: SessionStatus = {
      sessionId,
      executionStatus: execution.executionStatus,
      startTime: execution.startTime.toISOString(),
      ...(execution.closeTime ? { closeTime: execution.closeTime.toISOString() } : {}),
    };
    if (execution.executionStatus !== 'RUNNING') return status;
    return { ...status, conversation: await agent.status(sessionId) };
  }

  async history(sessionId: string, last: number): Promise<SessionHistory> {
    const agent = this.agent();
    await this.execution(agent, sessionId);
    return agent.transcriptTail(sessionId, last);
  }

  async send(sessionId: string, message: UserMessageInput): Promise<SentToSession> {
    const agent = this.agent();
    await this.execution(agent, sessionId);
    return agent.signalMessage(sessionId, message);
  }

  async identityOf(sessionId: string): Promise<SessionIdentity> {
    const agent = this.agent();
    await this.execution(agent, sessionId);
    // An ended conversation still answers queries (a worker replays it); nothing from a worker older
    // than these fields in the status, or when no worker can answer: then it is nobody's.
    return agent.status(sessionId).then(
      ({ agentId, root }) => ({
        ...(agentId !== undefined ? { agentId } : {}),
        ...(root !== undefined ? { root } : {}),
      }),
      () => ({}),
    );
  }

  async runEnd(
    sessionId: string,
    sent: SentToSession & { messageId: string },
    signal: AbortSignal,
  ): Promise<RunEnd> {
    const run = this.agent().followRun(
      { conversationId: sessionId, ...sent },
      { signal, pollMs: ANSWER_POLL_MS },
    );
    for (;;) {
      const next = await run.next();
      if (next.done) return next.value;
    }
  }

  /** The session's execution, or ConversationNotFoundError for anything that is not a conversation on this queue. */
  private async execution(agent: AgentClient, sessionId: string) {
    const execution = await agent.execution(sessionId);
    if (execution.workflowType !== CONVERSATION_WORKFLOW_TYPE || execution.taskQueue !== agent.taskQueue) {
      throw new ConversationNotFoundError(sessionId);
    }
    return execution;
  }
}
