import { ZodError } from 'zod';
import { TooManyRequests } from '../gateway/gateway-errors';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  MessageIdConflictError,
  UpdateRefusedError,
} from '../shared/conversation-errors';
import { schemaProblems } from '../shared/schema-problems';
import { line } from './quoted-text';

/** Messages past this are cut: a refusal's reason can quote what a model wrote. */
const MESSAGE_CHARS = 1_000;

/**
 * What the caller is told of an error it can act on (a refusal of its scope, a conversation that
 * does not exist or has ended, bad arguments, a decision the conversation refused, too many waits),
 * in one printable line; undefined for an error of the server's own, which stays a protocol error.
 */
export function callerErrorMessage(error: unknown): string | undefined {
  if (error instanceof ZodError) return `invalid arguments: ${line(schemaProblems(error), MESSAGE_CHARS)}`;
  if (
    error instanceof GatewayAuthError ||
    error instanceof TooManyRequests ||
    error instanceof ConversationNotFoundError ||
    error instanceof ConversationEndedError ||
    error instanceof ConversationExistsError ||
    error instanceof MessageIdConflictError ||
    error instanceof UpdateRefusedError ||
    error instanceof InvalidInputError
  )
    return line(error.message, MESSAGE_CHARS);
  return undefined;
}
