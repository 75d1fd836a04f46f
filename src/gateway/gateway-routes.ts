import type { FastifyInstance } from 'fastify';
import { registerA2ARoutes } from './a2a/a2a-routes';
import type { GatewayAccess } from './gateway-access';
import type { GatewayDeps } from './gateway-deps';
import { DEFAULT_MAX_STREAMS_PER_TOKEN } from './gateway-deps';
import { openApiDocument } from './openapi-document';
import { registerAgUiRoutes } from './routes/ag-ui';
import { registerApprovalRoutes } from './routes/approvals';
import { registerControlRoutes } from './routes/control';
import { registerConversationRoutes } from './routes/conversations';
import { registerEventRoutes } from './routes/events';
import { streamCounter } from './stream-counter';

/**
 * The API for services that are not Temporal clients: `/openapi.json` and every `/v1` route. Each
 * request names a token; the token's identity is the sender of its messages and the approver of
 * its decisions, whatever the body says, and its scope (actions, agents, conversation id
 * prefixes) is checked first.
 */
export function registerGatewayRoutes(app: FastifyInstance, deps: GatewayDeps, access: GatewayAccess): void {
  app.get('/openapi.json', async () => openApiDocument());
  // POST /v1/conversations, GET /v1/conversations/:id
  registerConversationRoutes(app, deps, access);
  // POST /v1/conversations/:id/messages, /steer, /abort, /end
  registerControlRoutes(app, deps, access);
  // GET /v1/conversations/:id/approvals, POST /v1/conversations/:id/approvals/:toolCallId
  registerApprovalRoutes(app, deps, access);
  // Streams of every kind (events, AG-UI, A2A) count towards a token's limit together.
  const openStream = streamCounter(deps.maxStreamsPerToken ?? DEFAULT_MAX_STREAMS_PER_TOKEN);
  // GET /v1/conversations/:id/events (server-sent events)
  registerEventRoutes(app, deps, access, openStream);
  // POST /v1/ag-ui (AG-UI run input in, AG-UI events out as server-sent events)
  registerAgUiRoutes(app, deps, access, openStream);
  // GET /.well-known/agent-card.json, POST /a2a (A2A's JSON-RPC binding)
  registerA2ARoutes(app, deps, access, openStream);
}
