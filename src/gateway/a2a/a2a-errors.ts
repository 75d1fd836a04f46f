import { A2A_ERROR_CODES } from '../../shared/a2a';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  InvalidInputError,
  MessageIdConflictError,
  UpdateRefusedError,
} from '../../shared/conversation-errors';
import { BadRequest, TooManyRequests } from '../gateway-errors';
import { GatewayAuthError } from '../gateway-tokens';

/** An A2A error: its JSON-RPC code says to the caller what went wrong. */
export class A2AError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'A2AError';
  }
}

export const taskNotFound = (taskId: string) =>
  new A2AError(A2A_ERROR_CODES.taskNotFound, `no task ${JSON.stringify(taskId)}`);
export const invalidParams = (message: string) => new A2AError(A2A_ERROR_CODES.invalidParams, message);
export const unsupported = (message: string) => new A2AError(A2A_ERROR_CODES.unsupportedOperation, message);

/** A JSON-RPC error object, and the HTTP status it is answered with (200 but for a token refused). */
export function rpcErrorOf(error: unknown): { httpStatus: number; code: number; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof GatewayAuthError)
    return { httpStatus: error.status, code: A2A_ERROR_CODES.unauthorized, message };
  if (error instanceof A2AError) return { httpStatus: 200, code: error.code, message };
  if (error instanceof TooManyRequests)
    return { httpStatus: 429, code: A2A_ERROR_CODES.internalError, message };
  if (error instanceof ConversationNotFoundError)
    return { httpStatus: 200, code: A2A_ERROR_CODES.taskNotFound, message };
  if (error instanceof ConversationEndedError)
    return { httpStatus: 200, code: A2A_ERROR_CODES.unsupportedOperation, message };
  if (
    error instanceof BadRequest ||
    error instanceof InvalidInputError ||
    error instanceof MessageIdConflictError ||
    error instanceof UpdateRefusedError
  )
    return { httpStatus: 200, code: A2A_ERROR_CODES.invalidParams, message };
  return { httpStatus: 200, code: A2A_ERROR_CODES.internalError, message };
}
