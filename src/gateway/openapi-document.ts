import { z } from 'zod';
import {
  AbortBodySchema,
  ApproveBodySchema,
  EndBodySchema,
  MessageBodySchema,
  StartConversationBodySchema,
} from './gateway-api';
import { JsonRpcRequestSchema } from '../shared/a2a';
import { RunAgentInputSchema } from './ag-ui/ag-ui-input';

type Operation = {
  summary: string;
  action: string;
  body?: z.ZodType;
  stream?: boolean;
  status?: number;
  /** Takes an `Idempotency-Key` header: a retry is answered as the first request was. */
  keyed?: boolean;
  /** Needs no token. */
  public?: boolean;
  /** What it needs and does, when more than one action says it. */
  description?: string;
};

/** The `Idempotency-Key` header of the routes that send a message. */
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    "The caller's name for this request (1 to 255 printable ASCII characters), sent again unchanged when it retries: the message is taken once, a retry is answered as the first request was (with `Idempotent-Replayed: true`), and the same key with another body is refused with 409. Instead of the body's `messageId`, not with it.",
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

const ROUTES: Record<string, Record<'get' | 'post', Operation | undefined>> = {
  '/v1/conversations': {
    post: {
      summary: 'Start a conversation, with an optional first message',
      action: 'start',
      body: StartConversationBodySchema,
      status: 201,
      keyed: true,
    },
    get: undefined,
  },
  '/v1/conversations/{id}': {
    get: { summary: "The conversation's status", action: 'status' },
    post: undefined,
  },
  '/v1/conversations/{id}/messages': {
    post: {
      summary: 'Send a message (queued during a run); a message id is taken once',
      action: 'send',
      body: MessageBodySchema,
      status: 202,
      keyed: true,
    },
    get: undefined,
  },
  '/v1/conversations/{id}/steer': {
    post: {
      summary: 'Steer the run in progress; a message id is taken once',
      action: 'steer',
      body: MessageBodySchema,
      status: 202,
      keyed: true,
    },
    get: undefined,
  },
  '/v1/conversations/{id}/abort': {
    post: { summary: 'Abort the run in progress', action: 'abort', body: AbortBodySchema },
    get: undefined,
  },
  '/v1/conversations/{id}/end': {
    post: {
      summary: 'End the conversation after the current run',
      action: 'end',
      body: EndBodySchema,
      status: 202,
    },
    get: undefined,
  },
  '/v1/conversations/{id}/approvals': {
    get: { summary: 'Pending approvals, with whole arguments and their SHA-256', action: 'status' },
    post: undefined,
  },
  '/v1/conversations/{id}/approvals/{toolCallId}': {
    post: {
      summary: "Decide a pending approval as the token's identity",
      action: 'approve',
      body: ApproveBodySchema,
    },
    get: undefined,
  },
  '/v1/conversations/{id}/events': {
    get: {
      summary:
        'Events as server-sent events, from `Last-Event-ID` (or `?after=`) on; ends with an `end` event',
      action: 'events',
      stream: true,
    },
    post: undefined,
  },
  '/.well-known/agent-card.json': {
    get: {
      summary:
        "The A2A agent card: the agent's name, skills, capabilities, and the bearer token every call needs",
      action: 'none',
      public: true,
      description:
        'Public, as A2A has it: the card tells a caller what it needs; the calls themselves need a token.',
    },
    post: undefined,
  },
  '/a2a': {
    post: {
      summary:
        'A2A 1.0 JSON-RPC: SendMessage, SendStreamingMessage (server-sent events), GetTask, ListTasks, CancelTask, SubscribeToTask (from `Last-Event-ID`), Create/Get/List/DeleteTaskPushNotificationConfig',
      action: 'the method’s',
      body: JsonRpcRequestSchema,
      description:
        'Errors are JSON-RPC errors (HTTP 200), but a token missing or refused: 401 or 403 with a JSON-RPC error of code -32099. SendMessage needs `send` (and `start` for a new context), a decision part `approve`, free text to a running task `steer`; GetTask and ListTasks `status`; SubscribeToTask `events`; CancelTask `abort`; Create and DeleteTaskPushNotificationConfig (and a push config given with SendMessage) `events`, Get and ListTaskPushNotificationConfigs `status`, each token seeing its own configs only. See docs/a2a.md.',
    },
    get: undefined,
  },
  '/v1/ag-ui': {
    post: {
      summary:
        "AG-UI 1.0: a run input (thread = conversation) in, the run's AG-UI events out as server-sent events; reconnect with `Last-Event-ID`",
      action: 'events (and send, approve or start for what the input delivers)',
      body: RunAgentInputSchema,
      stream: true,
    },
    get: undefined,
  },
};

/** The gateway's OpenAPI 3.1 document, its request bodies made from the same zod schemas that check them. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [route, methods] of Object.entries(ROUTES)) {
    const parameters = [...route.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    paths[route] = {};
    for (const [method, operation] of Object.entries(methods)) {
      if (!operation) continue;
      paths[route][method] = {
        summary: operation.summary,
        description: operation.description ?? `Needs a token allowed to ${operation.action}.`,
        ...(operation.public ? { security: [] } : {}),
        parameters: operation.keyed ? [...parameters, IDEMPOTENCY_KEY] : parameters,
        ...(operation.body
          ? {
              requestBody: {
                required: true,
                content: { 'application/json': { schema: z.toJSONSchema(operation.body, { io: 'input' }) } },
              },
            }
          : {}),
        responses: {
          [String(operation.status ?? 200)]: {
            description: 'done',
            content: operation.stream ? { 'text/event-stream': {} } : { 'application/json': {} },
          },
          '400': { description: 'invalid request (an unknown key included)' },
          '401': { description: 'no token, or an unknown or expired one' },
          '403': { description: 'the token may not do this here' },
          '404': { description: 'no such conversation' },
          '409': {
            description:
              'the conversation refused it (ended, nothing pending, a decision for other arguments, a message id or Idempotency-Key used before for another message, …)',
          },
          ...(operation.stream
            ? { '429': { description: 'the token has as many event streams open as it may' } }
            : {}),
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'durable-agent gateway', version: '1' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
