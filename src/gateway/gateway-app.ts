import Fastify, { type FastifyInstance } from 'fastify';
import { registerConsoleRoutes } from '../console/console-routes';
import { GatewayAccess } from './gateway-access';
import type { GatewayDeps } from './gateway-deps';
import { replyWithError } from './gateway-errors';
import { openApiDocument } from './openapi-document';
import { registerApprovalRoutes } from './routes/approvals';
import { registerControlRoutes } from './routes/control';
import { registerConversationRoutes } from './routes/conversations';
import { registerEventRoutes } from './routes/events';

export { DEFAULT_MAX_STREAMS_PER_TOKEN, type GatewayDeps } from './gateway-deps';

/**
 * The HTTP gateway for services that are not Temporal clients. Every `/v1` request names a token;
 * the token's identity is the sender of its messages and the approver of its decisions, whatever
 * the body says, and its scope (actions, agents, conversation id prefixes) is checked first.
 */
export function createGateway(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  // Set before any route, so every route answers its errors with their status.
  app.setErrorHandler(replyWithError);
  const access = new GatewayAccess(deps.tokens, deps.agent);

  app.get('/openapi.json', async () => openApiDocument());
  // POST /v1/conversations, GET /v1/conversations/:id
  registerConversationRoutes(app, deps, access);
  // POST /v1/conversations/:id/messages, /steer, /abort, /end
  registerControlRoutes(app, deps, access);
  // GET /v1/conversations/:id/approvals, POST /v1/conversations/:id/approvals/:toolCallId
  registerApprovalRoutes(app, deps, access);
  // GET /v1/conversations/:id/events (server-sent events)
  registerEventRoutes(app, deps, access);
  // /console: pages for the people who supervise agents, under the same tokens.
  registerConsoleRoutes(app, deps, access);
  return app;
}
