import {
  type Client,
  type QueryDefinition,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { assertConversationId } from '../shared/ids';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  UpdateRefusedError,
} from '../shared/conversation-errors';
import type { ModelTextSource } from './live-model-text';
import { READ_QUERY_RETRY_MS, describeWhileUnreachable, queryRetried } from './query-retry';

/**
 * What every call `AgentClient` makes shares: the Temporal client, the task queue conversations
 * start on, where live model text comes from, and the ways a call reaches a conversation with
 * Temporal's errors told as the client library's own.
 */
export class ClientContext {
  constructor(
    readonly client: Client,
    readonly taskQueue: string,
    /** Where model activities of this process hand over their text as it arrives. */
    readonly liveText: ModelTextSource,
  ) {}

  /** The conversation's workflow; refuses an id a conversation cannot have. */
  handle(conversationId: string): WorkflowHandle {
    return this.client.workflow.getHandle(assertConversationId(conversationId));
  }

  /** ConversationNotFoundError or ConversationEndedError unless the conversation runs. */
  async assertRunning(conversationId: string): Promise<void> {
    const description = await this.explainErrors(conversationId, () =>
      describeWhileUnreachable(this.handle(conversationId)),
    );
    if (description.status.name !== 'RUNNING') {
      throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
    }
  }

  /** Runs an update, turning a validator's refusal into UpdateRefusedError and a missing or closed workflow into ours. */
  async update<T>(conversationId: string, name: string, call: () => Promise<T>): Promise<T> {
    try {
      return await this.explainErrors(conversationId, call);
    } catch (error) {
      throw unwrapUpdateFailure(conversationId, name, error);
    }
  }

  /** A query, asked again for up to READ_QUERY_RETRY_MS when the worker that had the conversation cached is gone. */
  read<Args extends unknown[], T>(
    conversationId: string,
    query: QueryDefinition<T, Args>,
    ...args: Args
  ): Promise<T> {
    return this.readWithin(READ_QUERY_RETRY_MS, conversationId, query, ...args);
  }

  /** `read`, asked again for up to `withinMs`. */
  readWithin<Args extends unknown[], T>(
    withinMs: number,
    conversationId: string,
    query: QueryDefinition<T, Args>,
    ...args: Args
  ): Promise<T> {
    const handle = this.handle(conversationId);
    return queryRetried(() => handle.query(query, ...args), { withinMs });
  }

  /** Temporal says "not found" both for an unknown workflow and, to updates and signals, a closed one: say which. */
  async explainErrors<T>(conversationId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      const description = await this.handle(conversationId)
        .describe()
        .catch((describeError: unknown) => {
          if (describeError instanceof WorkflowNotFoundError)
            throw new ConversationNotFoundError(conversationId);
          throw describeError;
        });
      if (description.status.name !== 'RUNNING') {
        throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
      }
      throw error;
    }
  }
}

/**
 * The error a caller should see for a failed update: a validator's refusal (which arrives as
 * WorkflowUpdateFailedError wrapping the validator's error) becomes UpdateRefusedError; anything
 * else is returned unchanged.
 */
function unwrapUpdateFailure(conversationId: string, update: string, error: unknown): unknown {
  if (!(error instanceof WorkflowUpdateFailedError)) return error;
  const cause = error.cause;
  const reason = cause instanceof Error && cause.message ? cause.message : error.message;
  return new UpdateRefusedError(conversationId, update, reason);
}
