import type { FastifyRequest } from 'fastify';
import type { AgentClient } from '../client/agent-client';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import type { GatewayAction, GatewayToken } from './gateway-api';
import { GatewayAuthError, type GatewayTokens, authorize } from './gateway-tokens';

/**
 * Who may do what, asked by every `/v1` route: the request's token authenticated, then its scope
 * (actions, agents, conversation id prefixes) checked on the conversation it names.
 */
export class GatewayAccess {
  constructor(
    private readonly tokens: GatewayTokens,
    private readonly agent: AgentClient,
  ) {}

  /** The request's token, or 401. */
  authenticate(request: FastifyRequest): GatewayToken {
    return this.tokens.authenticate(request.headers.authorization);
  }

  /** Authenticates, then authorises `action` on the conversation. */
  async allowed(
    request: FastifyRequest,
    action: GatewayAction,
    conversationId: string,
  ): Promise<GatewayToken> {
    const token = this.authenticate(request);
    await this.authorizeOn(token, action, conversationId);
    return token;
  }

  /** Authorises `action` on the conversation, its agent looked up when the token is limited to some. */
  async authorizeOn(token: GatewayToken, action: GatewayAction, conversationId: string): Promise<void> {
    authorize(token, action, { conversationId });
    if (token.agents)
      authorize(token, action, {
        agentId: (await this.agent.status(conversationId)).agentId ?? DEFAULT_AGENT_ID,
      });
  }

  /** The check every start passes, explicit or by a message: this token may start here, for this agent. */
  authorizeStart(token: GatewayToken, conversationId: string, agentId: string | undefined): void {
    authorize(token, 'start', { conversationId, agentId: agentId ?? DEFAULT_AGENT_ID });
  }

  /** Whether a message from `token` may start `conversationId` (with default options) when there is none. */
  mayStart(token: GatewayToken, conversationId: string): boolean {
    try {
      this.authorizeStart(token, conversationId, undefined);
      return true;
    } catch (error) {
      if (error instanceof GatewayAuthError) return false;
      throw error;
    }
  }
}
