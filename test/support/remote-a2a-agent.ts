import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AgentCard, type Message, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  type RequestContext,
  ServerCallContext,
  UnauthenticatedUser,
} from '@a2a-js/sdk/server';

/** A remote A2A agent as another team writes it, with `@a2a-js/sdk`'s server, on 127.0.0.1. */
export interface RemoteA2AAgent {
  /** Its card's URL. */
  cardUrl: string;
  /** The origin it listens on. */
  origin: string;
  /** Every message it received, in order (SendMessage and SendStreamingMessage alike). */
  received: Message[];
  /** While held (the default is not held), tasks stay `working` until `release`. */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

/**
 * What it does with a message's text:
 * - `ask: …` asks back (`input-required`, "Which colour?"); the answer continues the task to `completed`;
 * - `fail: …` fails the task with the rest of the text as its reason; `reject: …` rejects it;
 * - anything else is answered `remote answer to: TEXT` as an artifact, then `completed`.
 * Calls need `Authorization: Bearer TOKEN` when `token` is given.
 */
export async function startRemoteA2AAgent(options: { token?: string } = {}): Promise<RemoteA2AAgent> {
  const received: Message[] = [];
  let held = false;
  let waiters: Array<() => void> = [];
  const released = () => (held ? new Promise<void>((resolve) => waiters.push(resolve)) : Promise.resolve());

  const executor: AgentExecutor = {
    async execute(request: RequestContext, bus: ExecutionEventBus) {
      const message = request.userMessage;
      received.push(message);
      const text = message.parts
        .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
        .join('');
      const { taskId, contextId } = request;
      const status = (state: TaskState, reply?: string) =>
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          metadata: undefined,
          status: {
            state,
            timestamp: new Date().toISOString(),
            message: reply ? agentMessage(reply) : undefined,
          },
        });
      const agentMessage = (reply: string): Message => ({
        messageId: `${taskId}-${received.length}`,
        contextId,
        taskId,
        role: Role.ROLE_AGENT,
        parts: [
          { content: { $case: 'text', value: reply }, metadata: undefined, filename: '', mediaType: '' },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      });
      bus.publish(
        AgentEvent.task(
          request.task ?? {
            id: taskId,
            contextId,
            status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
            artifacts: [],
            history: [message],
            metadata: undefined,
          },
        ),
      );
      bus.publish(status(TaskState.TASK_STATE_WORKING));
      await released();
      if (request.task === undefined && text.startsWith('ask:')) {
        bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour?'));
      } else if (text.startsWith('fail:')) {
        bus.publish(status(TaskState.TASK_STATE_FAILED, text.slice(5).trim()));
      } else if (text.startsWith('reject:')) {
        bus.publish(status(TaskState.TASK_STATE_REJECTED, text.slice(7).trim()));
      } else {
        const answer = request.task ? `the colour is ${text}` : `remote answer to: ${text}`;
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            append: false,
            lastChunk: true,
            metadata: undefined,
            artifact: {
              artifactId: 'answer',
              name: 'answer',
              description: '',
              parts: [
                {
                  content: { $case: 'text', value: answer },
                  metadata: undefined,
                  filename: '',
                  mediaType: '',
                },
              ],
              metadata: undefined,
              extensions: [],
            },
          }),
        );
        bus.publish(status(TaskState.TASK_STATE_COMPLETED));
      }
      bus.finished();
    },
    async cancelTask(taskId, bus) {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId: '',
          metadata: undefined,
          status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
        }),
      );
      bus.finished();
    },
  };

  let origin = '';
  const card = (): AgentCard => ({
    name: 'Colour desk',
    description: 'Answers questions about colours.',
    supportedInterfaces: [
      { url: `${origin}/a2a`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    ],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  });
  const transport = new JsonRpcTransportHandler(
    new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor),
  );
  // The SDK's JSON-RPC transport on a plain HTTP server: the card, and calls under the token.
  const server = http.createServer((request, response) => {
    void serve(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  async function serve(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    if (request.method === 'GET' && request.url === '/.well-known/agent-card.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card()));
      return;
    }
    if (request.method !== 'POST' || request.url !== '/a2a') {
      response.writeHead(404).end();
      return;
    }
    if (options.token && request.headers.authorization !== `Bearer ${options.token}`) {
      response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const version = request.headers['a2a-version'];
    const context = new ServerCallContext({
      user: new UnauthenticatedUser(),
      ...(typeof version === 'string' ? { requestedVersion: version } : {}),
    });
    const answer = await transport.handle(Buffer.concat(chunks).toString('utf8'), context);
    if (Symbol.asyncIterator in answer) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for await (const event of answer) response.write(`data: ${JSON.stringify(event)}\n\n`);
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The request handler holds a card made before the port was known; it reads only its versions.
  return {
    cardUrl: `${origin}/.well-known/agent-card.json`,
    origin,
    received,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      const waiting = waiters;
      waiters = [];
      waiting.forEach((resolve) => resolve());
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
