import { generateKeyPairSync, randomUUID } from 'node:crypto';
import nock from 'nock';
import type { FastifyInstance } from 'fastify';
import { type Part, type StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { freePort } from '../../src/platform/free-port';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { recordTool, tickerTool } from '../support/test-tools';
import { type TestHarness, startHarness } from '../support/test-worker';

/**
 * Another team's agent, written with the A2A JavaScript SDK (its client, not ours), works with a
 * durable agent through the gateway: it reads the card, sends, streams, polls, answers a pending
 * approval, cancels, retries, and resubscribes after the gateway went away mid-task.
 */
const gatewayKey = generateKeyPairSync('ed25519');
const TOKENS = {
  caller: `tok-a2a-caller-${randomUUID()}`,
  reader: `tok-a2a-reader-${randomUUID()}`,
  outsider: `tok-a2a-outsider-${randomUUID()}`,
};

let harness: TestHarness;
let gateway: FastifyInstance;
let port: number;
let baseUrl: string;

async function openGateway(): Promise<void> {
  gateway = createGateway({
    agent: harness.agent,
    signingKey: gatewayKey.privateKey,
    eventPollMs: 50,
    a2aCard: {
      name: 'Ticket desk',
      description: 'Records tickets, after a person allows it.',
      skills: [{ id: 'tickets', name: 'Tickets', description: 'Records a ticket.', tags: ['tickets'] }],
    },
    tokens: new GatewayTokens([
      { name: 'a2a-caller', token: TOKENS.caller, actions: ['*'], conversationPrefixes: ['a2a-'] },
      {
        name: 'a2a-reader',
        token: TOKENS.reader,
        actions: ['status', 'events'],
        conversationPrefixes: ['a2a-'],
      },
      { name: 'outsider', token: TOKENS.outsider, actions: ['*'], conversationPrefixes: ['other-'] },
    ]),
  });
  await gateway.listen({ port, host: '127.0.0.1' });
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    tools: [recordTool, tickerTool],
    approverKeys: {
      'a2a-caller': rawPublicKey(
        gatewayKey.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        'gw',
      ),
    },
  });
  await openGateway();
});

afterEach(() => nock.cleanAll());

afterAll(async () => {
  await gateway?.close();
  await harness?.close();
  nock.cleanAll();
  nock.enableNetConnect();
});

/** The SDK's client, as another team builds it, presenting `token` on every request. */
async function clientFor(token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(baseUrl);
}

const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  metadata: undefined,
  filename: '',
  mediaType: '',
});

function request(parts: Part[], ids: { messageId?: string; taskId?: string; contextId?: string } = {}) {
  return {
    tenant: '',
    message: {
      messageId: ids.messageId ?? randomUUID(),
      contextId: ids.contextId ?? '',
      taskId: ids.taskId ?? '',
      role: 1,
      parts,
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const stateOf = (event: StreamResponse) =>
  event.payload?.$case === 'statusUpdate'
    ? event.payload.value.status?.state
    : event.payload?.$case === 'task'
      ? event.payload.value.status?.state
      : undefined;
const textOf = (parts: Part[] | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
/** The streamed model text, chunk by chunk. */
const chunksOf = (events: StreamResponse[]) =>
  events.flatMap((event) =>
    event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId.startsWith('text-')
      ? [textOf(event.payload.value.artifact.parts)]
      : [],
  );

test('the card says what the agent is; a streamed task goes working, text in chunks, the answer, completed; GetTask polls the same', async () => {
  const answer = 'The ticket desk is open from nine to five.';
  nockModel([{ text: answer, textChunks: 4, chunkDelayMs: 30 }]);
  const client = await clientFor(TOKENS.caller);
  const card = await client.getAgentCard();
  expect(card).toMatchObject({
    name: 'Ticket desk',
    capabilities: { streaming: true, pushNotifications: false },
    skills: [expect.objectContaining({ id: 'tickets', name: 'Tickets' })],
  });
  expect(card.securitySchemes.gatewayToken?.scheme).toMatchObject({
    $case: 'httpAuthSecurityScheme',
    value: expect.objectContaining({ scheme: 'Bearer' }),
  });

  const events = await collect(client.sendMessageStream(request([textPart('When is the desk open?')])));
  expect(events[0]!.payload?.$case).toBe('task');
  const task = (events[0]!.payload as { value: { id: string; contextId: string } }).value;
  expect(task.contextId.startsWith('a2a-')).toBe(true);
  expect(events.map(stateOf).filter((state) => state !== undefined)).toEqual([
    TaskState.TASK_STATE_SUBMITTED,
    TaskState.TASK_STATE_WORKING,
    TaskState.TASK_STATE_COMPLETED,
  ]);
  expect(chunksOf(events).join('')).toBe(answer);
  const last = events.at(-2)!.payload;
  expect(last?.$case === 'artifactUpdate' && last.value.artifact?.artifactId).toBe('answer');

  const polled = await client.getTask({ tenant: '', id: task.id, historyLength: 5 });
  expect(polled.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(textOf(polled.artifacts[0]?.parts)).toBe(answer);
  expect(polled.history.map((message) => [message.role, textOf(message.parts)])).toEqual([
    [1, 'When is the desk open?'],
    [2, answer],
  ]);
  const listed = await client.listTasks({
    tenant: '',
    contextId: task.contextId,
    pageToken: '',
    status: 0,
  } as never);
  expect(listed.tasks.map((each) => each.id)).toEqual([task.id]);
});
