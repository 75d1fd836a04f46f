import type { ZodError } from 'zod';
import { schemaProblems } from './schema-problems';

/** No conversation has this id (no workflow with it was ever started, or it is past retention). */
export class ConversationNotFoundError extends Error {
  constructor(readonly conversationId: string) {
    super(`conversation ${conversationId} not found`);
    this.name = 'ConversationNotFoundError';
  }
}

/** The conversation is over; it takes no more messages or decisions. */
export class ConversationEndedError extends Error {
  constructor(
    readonly conversationId: string,
    /** The workflow's status, lower case: completed, failed, terminated, … */
    readonly how: string,
  ) {
    super(`conversation ${conversationId} has ended (${how})`);
    this.name = 'ConversationEndedError';
  }
}

/** The conversation refused an update: its validator's message, e.g. an unknown toolCallId. */
export class UpdateRefusedError extends Error {
  constructor(
    readonly conversationId: string,
    readonly update: string,
    readonly reason: string,
  ) {
    super(`conversation ${conversationId} refused ${update}: ${reason}`);
    this.name = 'UpdateRefusedError';
  }
}

/**
 * Input that fails its schema, said in one line: `invalid conversation options: unknown key
 * "approval.mod"; maxToolIterations: …`.
 */
export function invalidInput(what: string, error: ZodError): Error {
  return new Error(`invalid ${what}: ${schemaProblems(error)}`);
}
