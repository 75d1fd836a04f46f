import type { ZodError } from 'zod';
import { schemaProblemList } from './schema-problems';

/** No conversation has this id (no workflow with it was ever started, or it is past retention). */
export class ConversationNotFoundError extends Error {
  constructor(
    /** The id asked for. */
    readonly conversationId: string,
  ) {
    super(`conversation ${conversationId} not found`);
    this.name = 'ConversationNotFoundError';
  }
}

/** A conversation with this id was started before: an id names one conversation forever. */
export class ConversationExistsError extends Error {
  constructor(
    /** The id that is taken. */
    readonly conversationId: string,
  ) {
    super(`conversation ${conversationId} already exists`);
    this.name = 'ConversationExistsError';
  }
}

/** The conversation is over; it takes no more messages or decisions. */
export class ConversationEndedError extends Error {
  constructor(
    /** The conversation that has ended. */
    readonly conversationId: string,
    /** The workflow's status, lower case: completed, failed, terminated, … */
    readonly how: string,
  ) {
    super(`conversation ${conversationId} has ended (${how})`);
    this.name = 'ConversationEndedError';
  }
}

/**
 * A message was sent under an id the conversation had taken for another message (another text,
 * sender or images): it is not taken. A retry of the same message is not this error; it is answered
 * as the first delivery was.
 */
export class MessageIdConflictError extends Error {
  constructor(
    /** The conversation that took the id. */
    readonly conversationId: string,
    /** The id sent twice with different messages. */
    readonly messageId: string,
  ) {
    super(`conversation ${conversationId} took message ${messageId} before, with other content`);
    this.name = 'MessageIdConflictError';
  }
}

/** The conversation refused an update: its validator's message, e.g. an unknown toolCallId. */
export class UpdateRefusedError extends Error {
  constructor(
    /** The conversation that refused it. */
    readonly conversationId: string,
    /** The update's name, e.g. `approve`. */
    readonly update: string,
    /** Why, as the conversation's validator said. */
    readonly reason: string,
  ) {
    super(`conversation ${conversationId} refused ${update}: ${reason}`);
    this.name = 'UpdateRefusedError';
  }
}

/**
 * Input refused before anything is sent, said in one line: `invalid conversation options: unknown
 * key "approval.mod"; maxToolIterations: …`. `what` names the input, `problems` what is wrong with it.
 */
export class InvalidInputError extends Error {
  constructor(
    /** What input it was, e.g. `conversation options`. */
    readonly what: string,
    /** What is wrong with it, one problem each. */
    readonly problems: readonly string[],
  ) {
    super(`invalid ${what}: ${problems.join('; ')}`);
    this.name = 'InvalidInputError';
  }
}

/** Input that fails its schema, each problem with its path. */
export function invalidInput(what: string, error: ZodError): InvalidInputError {
  return new InvalidInputError(what, schemaProblemList(error));
}

/** A schedule with this id exists already. */
export class ScheduleExistsError extends Error {
  constructor(
    /** The id that is taken. */
    readonly scheduleId: string,
  ) {
    super(`schedule ${scheduleId} already exists`);
    this.name = 'ScheduleExistsError';
  }
}

/** No schedule has this id (never created, or deleted). */
export class ScheduleMissingError extends Error {
  constructor(
    /** The id asked for. */
    readonly scheduleId: string,
  ) {
    super(`schedule ${scheduleId} not found`);
    this.name = 'ScheduleMissingError';
  }
}
