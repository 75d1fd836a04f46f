import { keyedConversationSuffix, keyedMessageId, startRequestKey } from '../gateway/idempotency-key';
import type { McpSession } from './mcp-session';

/**
 * The key one tool call sends its message under, so a retried call sends it once: the caller's
 * `request_key` (the same on every retry the caller makes), else the connection's nonce with the
 * call's JSON-RPC id (the same when a call is delivered twice). None when neither is known: the
 * message then gets an id of its own, and a retry sends it again.
 */
export function callKey(
  requestKey: string | undefined,
  session: McpSession,
  requestId: string | number,
): string | undefined {
  if (requestKey !== undefined) return `key:${requestKey}`;
  if (session.nonce !== undefined) return `call:${session.nonce}:${typeof requestId}:${String(requestId)}`;
  return undefined;
}

/** The ids a keyed call's message and conversation get: the caller's own, as the gateway's Idempotency-Key makes them. */
export function keyedIds(callerName: string, key: string, start: Record<string, unknown>) {
  return {
    messageId: keyedMessageId(callerName, key),
    conversationSuffix: keyedConversationSuffix(callerName, key),
    startKey: startRequestKey(callerName, key, start),
  };
}
