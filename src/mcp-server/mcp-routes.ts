import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayToken } from '../gateway/gateway-api';
import { DEFAULT_MAX_STREAMS_PER_TOKEN, type GatewayDeps } from '../gateway/gateway-deps';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import { streamCounter } from '../gateway/stream-counter';
import { packageVersion } from '../platform/package-version';
import { createAgentMcpServer } from './agent-mcp-server';
import { applyDecisionAnswer, decisionAnswerOf, isDecisionAnswer } from './approval-elicitation';
import { gatewayCaller } from './mcp-caller';
import { newSession, sessionFromId, sessionIdOf } from './mcp-session';

/** Where the gateway serves MCP. */
export const MCP_PATH = '/mcp';

/**
 * The agent as an MCP server over Streamable HTTP at `/mcp`, under the gateway's tokens (bearer
 * tokens, their identity and scope as on every `/v1` route). Stateless: each POST is served by a
 * server made for it, what the client said at initialize travels in the session id it sends back,
 * and answers to approval questions are decided by whichever gateway they reach, so a restarted
 * gateway or another replica serves a client as well as the first. No stream of its own is offered
 * (GET is 405): messages for a request go on that request's response stream.
 */
export function registerMcpRoutes(app: FastifyInstance, deps: GatewayDeps, access: GatewayAccess): void {
  const openWait = streamCounter(deps.maxStreamsPerToken ?? DEFAULT_MAX_STREAMS_PER_TOKEN);
  const version = packageVersion();
  const log = (line: string) => process.stderr.write(`${line}\n`);

  app.post(MCP_PATH, async (request, reply) => {
    const token = authenticated(access, request, reply);
    if (!token) return reply;
    const caller = gatewayCaller(token, {
      access,
      tokens: deps.tokens,
      ...(deps.signingKey ? { signingKey: deps.signingKey } : {}),
    });
    const messages: unknown[] = Array.isArray(request.body) ? request.body : [request.body];
    // The client's answers to approval questions: decided here, as this request's caller.
    for (const message of messages.filter(isDecisionAnswer)) {
      const answer = decisionAnswerOf(message);
      if (answer) await applyDecisionAnswer(deps.agent, caller, answer, log);
    }
    const rest = messages.filter((message) => !isDecisionAnswer(message));
    if (rest.length === 0) return reply.status(202).send();
    const initialize = rest.find(isInitializeRequest);
    const session = initialize
      ? newSession(initialize.params.capabilities)
      : sessionFromId(request.headers['mcp-session-id']);
    const server = createAgentMcpServer({
      agent: deps.agent,
      caller,
      session: () => session,
      version,
      log,
      openWait: () => openWait(token),
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    reply.hijack();
    // The request's server ends with its response: a client that goes away stops what it waited on.
    reply.raw.on('close', () => void server.close());
    if (initialize) reply.raw.setHeader('mcp-session-id', sessionIdOf(session));
    await transport.handleRequest(request.raw, reply.raw, Array.isArray(request.body) ? rest : rest[0]);
    return reply;
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: MCP_PATH,
      handler: async (request, reply) => {
        if (!authenticated(access, request, reply)) return reply;
        // No stream apart from requests, and no session kept to end: both are the client's to do without.
        return reply
          .status(405)
          .header('allow', 'POST')
          .send(jsonRpcError(ErrorCode.ConnectionClosed, `${method} is not served here: POST requests`));
      },
    });
  }
}

/** The request's token, or undefined once the reply says 401 (with the `WWW-Authenticate` challenge MCP clients read). */
function authenticated(
  access: GatewayAccess,
  request: FastifyRequest,
  reply: FastifyReply,
): GatewayToken | undefined {
  try {
    return access.authenticate(request);
  } catch (error) {
    if (!(error instanceof GatewayAuthError)) throw error;
    void reply
      .status(error.status)
      .header('www-authenticate', 'Bearer realm="durable-agent"')
      .send(jsonRpcError(-32001, error.message));
    return undefined;
  }
}

function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}
