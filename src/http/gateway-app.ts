import Fastify, { type FastifyInstance } from 'fastify';
import { registerConsoleRoutes } from '../console/console-routes';
import { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayDeps } from '../gateway/gateway-deps';
import { replyWithError } from '../gateway/gateway-errors';
import { registerGatewayRoutes } from '../gateway/gateway-routes';
import { registerMcpRoutes } from '../mcp-server/mcp-routes';

export { DEFAULT_MAX_STREAMS_PER_TOKEN, type GatewayDeps } from '../gateway/gateway-deps';

/**
 * The HTTP app the `gateway` command serves: the API for services (`src/gateway`) and the console
 * for people (`src/console`) on one server, under the same tokens and the same checks.
 */
export function createGateway(deps: GatewayDeps): FastifyInstance {
  const options = {
    logger: false,
    bodyLimit: 1024 * 1024,
    // Without trusted proxies, a request's protocol and host are its connection's and its Host header's.
    ...(deps.trustedProxies?.length ? { trustProxy: [...deps.trustedProxies] } : {}),
  };
  // The routes read requests and write replies alike over either server; only the server's type differs.
  const app = deps.tls
    ? (Fastify({
        ...options,
        https: { cert: deps.tls.cert, key: deps.tls.key },
      }) as unknown as FastifyInstance)
    : Fastify(options);
  // Set before any route, so every route answers its errors with their status.
  app.setErrorHandler(replyWithError);
  // For an orchestrator's probes: answered without a token, and saying nothing but that it serves.
  app.get('/healthz', async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ live: true }),
  );
  const access = new GatewayAccess(deps.tokens, deps.agent);
  registerGatewayRoutes(app, deps, access);
  // /console: pages for the people who supervise agents, under the same tokens.
  registerConsoleRoutes(app, deps, access);
  // /mcp: the agent as an MCP server (Streamable HTTP), under the same tokens.
  registerMcpRoutes(app, deps, access);
  return app;
}
