import type { KeyObject } from 'node:crypto';
import { signDecision } from '../client/sign-decision';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayAction, GatewayToken } from '../gateway/gateway-api';
import { type GatewayTokens, authorize } from '../gateway/gateway-tokens';
import type { ApprovalDecision } from '../shared/approvals';

/**
 * Who is calling the MCP server, and what they may do: every tool and task asks it before it acts.
 * Over HTTP it is a gateway token (its identity, actions, agents and conversation prefixes, as on
 * every `/v1` route); over stdio the person who started `durable-agent mcp`, who may do anything
 * a Temporal client may.
 */
export interface McpCaller {
  /** The identity messages are sent as and decisions are made by. */
  readonly name: string;
  /** The actions this caller may take at all (tools it may not use are not listed). */
  mayEver(action: GatewayAction): boolean;
  /** Throws (GatewayAuthError 403, or ConversationNotFoundError) unless `action` is allowed on the conversation. */
  authorize(action: GatewayAction, conversationId: string): Promise<void>;
  /**
   * Throws unless this caller may start `conversationId` for `agentId` (the default agent when
   * absent) and send it its first message.
   */
  authorizeStart(conversationId: string, agentId: string | undefined): void;
  /** The id of a conversation this caller starts without naming one: its prefix, then `suffix`. */
  newConversationId(suffix: string): string;
  /** The decision as the conversation takes it from this caller: signed where the door has a key. */
  decision(
    conversationId: string,
    decision: ApprovalDecision & { argumentsSha256: string },
  ): ApprovalDecision;
  /** Throws (401) once the caller may not go on: asked before each message of a long request. */
  recheck(): void;
}

/** A gateway token as an MCP caller, checked as the gateway's `/v1` routes check it. */
export function gatewayCaller(
  token: GatewayToken,
  deps: { access: GatewayAccess; tokens: GatewayTokens; signingKey?: KeyObject },
): McpCaller {
  return {
    name: token.name,
    mayEver: (action) => token.actions.includes('*') || token.actions.includes(action),
    authorize: (action, conversationId) => deps.access.authorizeOn(token, action, conversationId),
    authorizeStart: (conversationId, agentId) => {
      deps.access.authorizeStart(token, conversationId, agentId);
      authorize(token, 'send', { conversationId });
    },
    newConversationId: (suffix) => `${token.conversationPrefixes?.[0] ?? 'conv-'}${suffix}`,
    // The approver is the token's identity; the gateway signs as it when it has a key.
    decision: (conversationId, decision) =>
      deps.signingKey ? signDecision(conversationId, decision, deps.signingKey) : decision,
    recheck: () => deps.tokens.recheck(token),
  };
}

/**
 * The person at a desktop client that started `durable-agent mcp`: a Temporal client like `send`
 * and `approve`, allowed what they are; with `signingKey`, their decisions are signed with it (for
 * workers that take signed decisions only).
 */
export function localCaller(name: string, signingKey?: KeyObject): McpCaller {
  return {
    name,
    mayEver: () => true,
    authorize: async () => undefined,
    authorizeStart: () => undefined,
    newConversationId: (suffix) => `mcp-${suffix}`,
    decision: (conversationId, decision) =>
      signingKey ? signDecision(conversationId, decision, signingKey) : decision,
    recheck: () => undefined,
  };
}
