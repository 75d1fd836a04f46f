import { createHash } from 'node:crypto';
import type { GatewayToken } from '../gateway-api';

/**
 * A task is a user message and all it causes, so its id names the conversation (the A2A context)
 * and the message's id in it: `CONTEXT/MESSAGE`. A conversation id has no `/`, so the first one
 * splits them; the gateway keeps nothing to look a task up by.
 */
export function taskIdOf(contextId: string, messageId: string): string {
  return `${contextId}/${messageId}`;
}

/** The context and message a task id names, or undefined for one this gateway never made. */
export function parseTaskId(taskId: string): { contextId: string; messageId: string } | undefined {
  const slash = taskId.indexOf('/');
  if (slash < 1 || slash === taskId.length - 1) return undefined;
  return { contextId: taskId.slice(0, slash), messageId: taskId.slice(slash + 1) };
}

/**
 * The id a caller's message is taken under in the conversation: the same for every retry of it by
 * the same token (so the conversation takes it once), and another token's message of the same id
 * is another message.
 */
export function conversationMessageId(token: GatewayToken, a2aMessageId: string): string {
  return `a2a-${digest(['a2a-message', token.name, a2aMessageId]).slice(0, 40)}`;
}

/**
 * The context (conversation) a message that names none starts: made from the token and the
 * message's id, so a retried send finds the conversation the first one started, under the token's
 * first conversation prefix when it has some.
 */
export function newContextId(token: GatewayToken, a2aMessageId: string): string {
  const suffix = digest(['a2a-context', token.name, a2aMessageId]).slice(0, 32);
  return `${token.conversationPrefixes?.[0] ?? 'a2a-'}${suffix}`;
}

function digest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
