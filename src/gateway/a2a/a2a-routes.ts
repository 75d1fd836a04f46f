import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  A2A_ERROR_CODES,
  A2A_TERMINAL_STATES,
  A2AListPushConfigsParamsSchema,
  A2APushConfigIdParamsSchema,
  A2APushConfigParamsSchema,
  A2ASendParamsSchema,
  A2ATaskIdParamsSchema,
  type A2AStreamResponse,
  JsonRpcRequestSchema,
} from '../../shared/a2a';
import type { GatewayToken } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { streamEvents } from '../event-stream';
import { A2A_RPC_PATH, DEFAULT_A2A_CARD, agentCard } from './a2a-card';
import type { A2AContext } from './a2a-context';
import { CURSOR_KEY, decodeCursor, encodeCursor } from './a2a-cursor';
import { A2AError, invalidParams, rpcErrorOf, unsupported } from './a2a-errors';
import { followTask } from './a2a-follow';
import { A2AMetrics } from './a2a-metrics';
import { cancelTask, getTask, listTasks, paramsOf, refOf, sendMessage } from './a2a-methods';
import {
  deletePushConfig,
  getPushConfig,
  listPushConfigs,
  setPushConfig,
  takeWithPushConfig,
} from './a2a-push-configs';
import { authorizeOnTask } from './a2a-send';
import type { Taken } from './a2a-send';
import { readTask } from './a2a-task-reader';

type RpcId = string | number | null;

/** The methods that answer with a stream of server-sent events. */
const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask']);

/**
 * A2A 1.0 on the gateway: the agent card at `/.well-known/agent-card.json` (public, as the protocol
 * has it) and the JSON-RPC binding at `/a2a`, every call under a gateway token, checked as the `/v1`
 * routes check theirs. Tasks are read from the conversations' workflows each time: the gateway keeps
 * nothing a caller depends on.
 */
export function registerA2ARoutes(
  app: FastifyInstance,
  deps: GatewayDeps,
  access: GatewayAccess,
  openStream: (token: GatewayToken) => () => void,
): void {
  const a2a: A2AContext = {
    deps,
    access,
    card: deps.a2aCard ?? DEFAULT_A2A_CARD,
    metrics: new A2AMetrics(deps.metricMeter),
  };

  app.get('/.well-known/agent-card.json', async (request) =>
    agentCard(a2a.card, `${request.protocol}://${request.host}`),
  );

  app.post(
    A2A_RPC_PATH,
    {
      // A body that is not JSON (or too large) is a JSON-RPC error too.
      errorHandler: (error, _request, reply) => {
        const code =
          (error as { statusCode?: number }).statusCode === 413
            ? A2A_ERROR_CODES.invalidRequest
            : A2A_ERROR_CODES.parseError;
        a2a.metrics.request(undefined, code);
        void reply.status(200).send(rpcError(null, code, error.message));
      },
    },
    async (request, reply) => {
      const parsed = JsonRpcRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        a2a.metrics.request(undefined, A2A_ERROR_CODES.invalidRequest);
        return reply.send(rpcError(null, A2A_ERROR_CODES.invalidRequest, 'not a JSON-RPC 2.0 request'));
      }
      const { id = null, method, params } = parsed.data;
      try {
        assertVersion(request);
        const token = access.authenticate(request);
        if (STREAMING.has(method)) {
          await stream(a2a, request, reply, token, id, method, params, openStream);
          a2a.metrics.request(method, undefined);
          return;
        }
        const result = await call(a2a, token, method, params);
        a2a.metrics.request(method, undefined);
        return reply.send({ jsonrpc: '2.0', id, result });
      } catch (error) {
        const { httpStatus, code, message } = rpcErrorOf(error);
        a2a.metrics.request(method, code);
        return reply.status(httpStatus).send(rpcError(id, code, message));
      }
    },
  );
}

function rpcError(id: RpcId, code: number, message: string) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** A caller that names a protocol version names 1.x. */
function assertVersion(request: FastifyRequest): void {
  const version = request.headers['a2a-version'];
  if (version === undefined || (typeof version === 'string' && /^1(\.\d+)?$/.test(version.trim()))) return;
  throw new A2AError(-32009, `this agent speaks A2A 1.0, not ${JSON.stringify(version)}`);
}

async function call(a2a: A2AContext, token: GatewayToken, method: string, params: unknown): Promise<unknown> {
  switch (method) {
    case 'SendMessage':
      return sendMessage(a2a, token, paramsOf(A2ASendParamsSchema, params));
    case 'GetTask':
      return getTask(a2a, token, params);
    case 'ListTasks':
      return listTasks(a2a, token, params);
    case 'CancelTask':
      return cancelTask(a2a, token, params);
    case 'CreateTaskPushNotificationConfig': {
      const config = paramsOf(A2APushConfigParamsSchema, params);
      if (!config.taskId) throw invalidParams('invalid params: taskId names the task');
      return setPushConfig(a2a, token, refOf(config.taskId), config);
    }
    case 'GetTaskPushNotificationConfig': {
      const { taskId, id } = paramsOf(A2APushConfigIdParamsSchema, params);
      return getPushConfig(a2a, token, refOf(taskId), id);
    }
    case 'ListTaskPushNotificationConfigs':
      return listPushConfigs(a2a, token, refOf(paramsOf(A2AListPushConfigsParamsSchema, params).taskId));
    case 'DeleteTaskPushNotificationConfig': {
      const { taskId, id } = paramsOf(A2APushConfigIdParamsSchema, params);
      return deletePushConfig(a2a, token, refOf(taskId), id);
    }
    default:
      throw new A2AError(A2A_ERROR_CODES.methodNotFound, `no method ${JSON.stringify(method.slice(0, 128))}`);
  }
}

/**
 * Where a stream begins: a new message taken, or a task subscribed to (after the client's
 * `Last-Event-ID`); `over` when the client has seen the task's end already, so the task as it stands
 * is all there is to send.
 */
async function streamStart(
  a2a: A2AContext,
  request: FastifyRequest,
  token: GatewayToken,
  method: string,
  params: unknown,
): Promise<Taken & { over?: boolean }> {
  if (method === 'SendStreamingMessage')
    return takeWithPushConfig(a2a, token, paramsOf(A2ASendParamsSchema, params));
  const ref = refOf(paramsOf(A2ATaskIdParamsSchema, params).id);
  await authorizeOnTask(a2a, token, 'events', ref);
  const header = request.headers['last-event-id'];
  const resume = decodeCursor(typeof header === 'string' ? header : undefined);
  const view = await readTask(a2a.deps.agent, ref, { historyLength: 0 });
  if (!resume && A2A_TERMINAL_STATES.has(view.state))
    throw unsupported(`task ${ref.taskId} has ended (${view.state}): GetTask reads it`);
  const cursor = resume ?? { seq: view.lastSeq, ...(view.run !== undefined ? { run: view.run } : {}) };
  const over = view.finished !== undefined && cursor.seq >= view.finished.seq;
  return { ref, snapshot: view.task, afterRun: view.afterRun, cursor, over };
}

async function stream(
  a2a: A2AContext,
  request: FastifyRequest,
  reply: FastifyReply,
  token: GatewayToken,
  id: RpcId,
  method: string,
  params: unknown,
  openStream: (token: GatewayToken) => () => void,
): Promise<void> {
  const close = openStream(token);
  const closeMetric = a2a.metrics.streamOpened();
  try {
    // Refused before the stream opens: answered as a JSON-RPC error, not as an event.
    const start = await streamStart(a2a, request, token, method, params);
    const frame = (result: A2AStreamResponse, cursor: string) =>
      `id: ${cursor}\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`;
    await streamEvents(reply, {
      check: () => a2a.deps.tokens.recheck(token),
      ...(token.expiresAt !== undefined ? { checkAt: Date.parse(token.expiresAt) } : {}),
      keepAliveMs: a2a.deps.keepAliveMs ?? 15_000,
      produce: async (write, stop) => {
        const at = encodeCursor(start.cursor);
        write(
          frame(
            { task: { ...start.snapshot, metadata: { ...start.snapshot.metadata, [CURSOR_KEY]: at } } },
            at,
          ),
        );
        if (start.over) return;
        try {
          const updates = followTask(a2a.deps.agent, {
            ...start,
            signal: stop,
            pollMs: a2a.deps.eventPollMs,
          });
          for await (const update of updates) write(frame(update.response, update.cursor));
        } catch (error) {
          if (stop.aborted) return;
          const { code, message } = rpcErrorOf(error);
          write(`data: ${JSON.stringify(rpcError(id, code, message))}\n\n`);
        }
      },
    });
  } finally {
    closeMetric();
    close();
  }
}
