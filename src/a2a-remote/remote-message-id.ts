import { createHash } from 'node:crypto';

/**
 * The `messageId` of the one message a tool call sends: the same for every attempt of the call, so
 * a remote that takes a message id once (as A2A allows) never sees it twice, and made by hashing,
 * so the remote learns neither the conversation's id nor the call's.
 */
export function remoteMessageId(conversationId: string, toolCallId: string): string {
  const digest = createHash('sha256').update(`${conversationId}\n${toolCallId}`).digest('hex');
  return `durable-agent-${digest.slice(0, 40)}`;
}
