import { execFile, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import nock from 'nock';
import type { FastifyInstance } from 'fastify';
import type { MetricMeter } from '@temporalio/common';
import { type Part, type StreamResponse, TaskState } from '@a2a-js/sdk';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { freePort } from '../../src/platform/free-port';
import {
  A2A_CURSOR,
  a2aClientFor,
  a2aRequest,
  chunksOf,
  collect,
  cursorOf,
  dataPart,
  stateOf,
  textChunksOf,
  textOf,
  textPart,
} from '../support/a2a-js-client';
import { inCi } from '../support/in-ci';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { recordTool, recorded, tickerTool } from '../support/test-tools';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * Another team's agent, written with the A2A JavaScript SDK (its client, not ours), works with a
 * durable agent through the gateway: it reads the card, sends, streams, polls, answers a pending
 * approval, cancels, retries, and resubscribes after the gateway went away mid-task. A Python
 * caller, written with PyPI's `a2a-sdk` (installed by the tests' global setup), does the same.
 */
const gatewayKey = generateKeyPairSync('ed25519');
const TOKENS = {
  caller: `tok-a2a-caller-${randomUUID()}`,
  reader: `tok-a2a-reader-${randomUUID()}`,
  outsider: `tok-a2a-outsider-${randomUUID()}`,
  sender: `tok-a2a-sender-${randomUUID()}`,
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What the gateway recorded through its meter: `name method=… outcome=…` to the counter's sum or the gauge's value. */
const gatewayMetrics = new Map<string, number>();
const seriesKey = (name: string, tags: Record<string, unknown> = {}) =>
  [name, ...Object.entries(tags).map(([key, value]) => `${key}=${String(value)}`)].join(' ');
const meter = {
  createCounter: (name: string) => ({
    add: (value: number, tags?: Record<string, unknown>) =>
      gatewayMetrics.set(seriesKey(name, tags), (gatewayMetrics.get(seriesKey(name, tags)) ?? 0) + value),
  }),
  createGauge: (name: string) => ({
    set: (value: number, tags?: Record<string, unknown>) => gatewayMetrics.set(seriesKey(name, tags), value),
  }),
  createHistogram: () => ({ record: () => undefined }),
  withTags: () => meter,
} as unknown as MetricMeter;

let harness: TestHarness;
let gateway: FastifyInstance;
let port: number;
let baseUrl: string;

async function openGateway(): Promise<void> {
  gateway = createGateway(gatewayDeps(true));
  await gateway.listen({ port, host: '127.0.0.1' });
}

/** The tests' gateway; `allowPrivatePush`: push URLs may name 127.0.0.1, where the tests' receivers are. */
function gatewayDeps(allowPrivatePush: boolean): Parameters<typeof createGateway>[0] {
  return {
    agent: harness.agent,
    ...(allowPrivatePush ? { a2aPushAllowPrivate: true } : {}),
    signingKey: gatewayKey.privateKey,
    eventPollMs: 50,
    metricMeter: meter,
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
      {
        name: 'a2a-sender',
        token: TOKENS.sender,
        actions: ['send', 'start', 'status'],
        conversationPrefixes: ['a2a-'],
      },
    ]),
  };
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    tools: [recordTool, tickerTool],
    a2aPushAllowPrivate: true,
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

const clientFor = (token: string) => a2aClientFor(baseUrl, token);
const request = a2aRequest;

test('the card says what the agent is; a streamed task goes working, text in chunks, the answer, completed; GetTask polls the same', async () => {
  const answer = 'The ticket desk is open from nine to five.';
  nockModel([{ text: answer, textChunks: 4, chunkDelayMs: 30 }]);
  const client = await clientFor(TOKENS.caller);
  const card = await client.getAgentCard();
  expect(card).toMatchObject({
    name: 'Ticket desk',
    capabilities: { streaming: true, pushNotifications: true },
    skills: [expect.objectContaining({ id: 'tickets', name: 'Tickets' })],
  });
  expect(card.securitySchemes.gatewayToken?.scheme).toMatchObject({
    $case: 'httpAuthSecurityScheme',
    value: expect.objectContaining({ scheme: 'Bearer' }),
  });

  const openapi = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as {
    paths: Record<string, unknown>;
  };
  expect(Object.keys(openapi.paths)).toEqual(
    expect.arrayContaining(['/a2a', '/.well-known/agent-card.json']),
  );

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

test('a send retried with the same messageId is one task and one run; polling follows it to completed', async () => {
  const script = nockModel([{ text: 'Polled.' }]);
  const client = await clientFor(TOKENS.caller);
  const send = () =>
    client.sendMessage({
      ...request([textPart('Answer when polled')], { messageId: 'retried-message' }),
      configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
    });
  const first = await send();
  const again = await send();
  const task = { value: first as unknown as { id: string; contextId: string } };
  expect(task.value.id).toMatch(/^a2a-/);
  expect((again as unknown as typeof task.value).id).toBe(task.value.id);
  const done = await waitFor(async () => {
    const polled = await client.getTask({ tenant: '', id: task.value.id, historyLength: 0 });
    return polled.status?.state === TaskState.TASK_STATE_COMPLETED ? polled : undefined;
  }, 'the task to complete');
  expect(textOf(done.artifacts[0]?.parts)).toBe('Polled.');
  expect(done.history).toEqual([]);
  // Sent again after it ran: still the one task, not a second run.
  expect(((await send()) as unknown as typeof task.value).id).toBe(task.value.id);
  expect((await harness.agent.status(task.value.contextId)).runCount).toBe(1);
  expect(script.requests).toHaveLength(1);
});

test('a pending approval is input-required with what waits; a decision part answers it as the token, signed; a reader may not', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_a2a_record', name: 'record', arguments: { value: 'ticket-9' } }] },
    { text: 'Recorded ticket-9.' },
  ]);
  const client = await clientFor(TOKENS.caller);
  const asked = await collect(client.sendMessageStream(request([textPart('Record ticket 9')])));
  const task = (asked[0]!.payload as { value: { id: string; contextId: string } }).value;
  const waiting = asked.at(-1)!.payload;
  expect(waiting?.$case).toBe('statusUpdate');
  const status = (waiting as { value: { status: { state: number; message: { parts: Part[] } } } }).value
    .status;
  expect(status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const request_ = status.message.parts.find((part) => part.content?.$case === 'data')!.content!
    .value as Record<string, unknown>;
  expect(request_).toMatchObject({
    kind: 'approval_request',
    toolCallId: 'call_a2a_record',
    tool: 'record',
    arguments: '{"value":"ticket-9"}',
    argumentsSha256: sha256('{"value":"ticket-9"}'),
    risk: 'medium',
  });
  const decision = {
    kind: 'approval_decision',
    toolCallId: 'call_a2a_record',
    decision: 'allow_once',
    argumentsSha256: request_.argumentsSha256,
  };
  const reader = await clientFor(TOKENS.reader);
  await expect(reader.sendMessage(request([dataPart(decision)], { taskId: task.id }))).rejects.toThrow(
    /may not approve/,
  );
  // A context that is not the task's is refused, as the protocol has it.
  await expect(
    client.sendMessage(request([dataPart(decision)], { taskId: task.id, contextId: 'a2a-another' })),
  ).rejects.toMatchObject({ name: 'RequestMalformedError' });
  await expect(
    client.sendMessage(
      request([dataPart({ ...decision, toolCallId: 'call_elsewhere' })], { taskId: task.id }),
    ),
  ).rejects.toThrow(/waits for no decision/);
  expect(recorded.has('call_a2a_record')).toBe(false);

  const answered = await collect(
    client.sendMessageStream(request([dataPart(decision)], { taskId: task.id })),
  );
  expect(
    answered
      .map(stateOf)
      .filter((state) => state !== undefined)
      .at(-1),
  ).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(recorded.get('call_a2a_record')).toBe('ticket-9');
  const decided = (await harness.agent.events(task.contextId)).find(
    (event) => event.type === 'approval_decided',
  );
  expect(decided).toMatchObject({ by: 'a2a-caller', decision: 'allow_once' });
  // The task has ended: a message to it is refused.
  await expect(client.sendMessage(request([textPart('more')], { taskId: task.id }))).rejects.toMatchObject({
    name: 'UnsupportedOperationError',
  });
});

test('free text to a working task steers its run, which answers the task', async () => {
  nockModel(
    [
      { toolCalls: [{ id: 'call_a2a_steer', name: 'ticker', arguments: { ticks: 600, everyMs: 50 } }] },
      { text: 'Steered to the short answer.' },
    ],
    { only: (request) => request.messages.some((message) => message.content === 'Count, then answer') },
  );
  const client = await clientFor(TOKENS.caller);
  const sent = await client.sendMessage({
    ...request([textPart('Count, then answer')]),
    configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
  });
  const { id, contextId } = sent as unknown as { id: string; contextId: string };
  await waitFor(async () => {
    const events = await harness.agent.events(contextId);
    return events.some((event) => event.type === 'tool_execution_start') ? true : undefined;
  }, 'the ticker to run');
  const steering = await collect(
    client.sendMessageStream(request([textPart('Stop counting and answer now')], { taskId: id })),
  );
  expect(stateOf(steering.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
  const taskIds = steering.map((event) => {
    const value = event.payload?.value as { taskId?: string; id?: string };
    return value.taskId ?? value.id;
  });
  expect(new Set(taskIds)).toEqual(new Set([id]));
  const polled = await client.getTask({ tenant: '', id, historyLength: 0 });
  expect(textOf(polled.artifacts[0]?.parts)).toBe('Steered to the short answer.');
  const events = await harness.agent.events(contextId);
  expect(
    events.filter((event) => event.type === 'steered').map((event) => event.type === 'steered' && event.text),
  ).toEqual(['Stop counting and answer now']);
  expect((await harness.agent.status(contextId)).runCount).toBe(1);
});

test('CancelTask aborts the run that works on the task: canceled, and then not cancelable again', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_a2a_tick', name: 'ticker', arguments: { ticks: 600, everyMs: 50 } }] },
  ]);
  const client = await clientFor(TOKENS.caller);
  const sent = await client.sendMessage({
    ...request([textPart('Count for a while')]),
    configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
  });
  const { id } = sent as unknown as { id: string };
  await waitFor(async () => {
    const polled = await client.getTask({ tenant: '', id, historyLength: 0 });
    return polled.status?.state === TaskState.TASK_STATE_WORKING ? polled : undefined;
  }, 'the task to work');
  const canceled = await client.cancelTask({ tenant: '', id, metadata: undefined });
  expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect(textOf(canceled.status?.message?.parts)).toMatch(/canceled by a2a-caller/);
  await expect(client.cancelTask({ tenant: '', id, metadata: undefined })).rejects.toMatchObject({
    name: 'TaskNotCancelableError',
  });
});

test('the gateway goes away mid-stream; the client resubscribes to another with its last cursor and sees the rest once, to completed', async () => {
  const answer = Array.from({ length: 24 }, (_, index) => `word${index}`).join(' ');
  nockModel([{ text: answer, textChunks: 12, chunkDelayMs: 150 }], {
    only: (request) => request.messages.some((message) => message.content === 'Say twenty-four words'),
  });
  const client = await clientFor(TOKENS.caller);
  const before: StreamResponse[] = [];
  let cursor = '';
  try {
    for await (const event of client.sendMessageStream(request([textPart('Say twenty-four words')]))) {
      before.push(event);
      const payload = event.payload?.value as { metadata?: Record<string, string> };
      cursor = payload.metadata?.[A2A_CURSOR] ?? cursor;
      if (chunksOf(before).length === 2) {
        // Abruptly: every connection cut, nothing said.
        gateway.server.closeAllConnections();
        await gateway.close();
      }
    }
  } catch {
    // The stream broke with the gateway.
  }
  expect(chunksOf(before).length).toBeGreaterThanOrEqual(2);
  await openGateway();
  const task = (before[0]!.payload as { value: { id: string } }).value;
  const after = await collect(
    client.resubscribeTask({ tenant: '', id: task.id }, { serviceParameters: { 'Last-Event-ID': cursor } }),
  );
  expect(after[0]!.payload?.$case).toBe('task');
  // What came after the cut came from the new gateway: more text, and the end.
  expect(chunksOf(after).length).toBeGreaterThan(0);
  expect(stateOf(after.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
  const updates = [...before, ...after.slice(1)];
  // No text twice: each chunk is the answer's text at its offset, and starts where the one before ended or later
  // (text made while no gateway followed the task may be skipped; the answer artifact has it whole).
  let end = 0;
  for (const { text, offset } of textChunksOf(updates)) {
    expect(offset).toBeGreaterThanOrEqual(end);
    expect(answer.slice(offset, offset + text.length)).toBe(text);
    end = offset + text.length;
  }
  expect(end).toBe(answer.length);
  const answered = after.find(
    (event) =>
      event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId === 'answer',
  );
  expect(textOf((answered?.payload?.value as { artifact: { parts: Part[] } }).artifact.parts)).toBe(answer);
  expect(updates.map(stateOf).filter((state) => state !== undefined)).toEqual([
    TaskState.TASK_STATE_SUBMITTED,
    TaskState.TASK_STATE_WORKING,
    TaskState.TASK_STATE_COMPLETED,
  ]);
});

test('resubscribed after the answer, a stream sends the final status alone; after the end, the task alone, and ends', async () => {
  nockModel([{ text: 'Done here.' }], {
    only: (request) => request.messages.some((message) => message.content === 'Answer, then resubscribe'),
  });
  const client = await clientFor(TOKENS.caller);
  const events = await collect(client.sendMessageStream(request([textPart('Answer, then resubscribe')])));
  const task = (events[0]!.payload as { value: { id: string } }).value;
  const answerAt = events.findIndex(
    (event) =>
      event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId === 'answer',
  );
  const resubscribe = (cursor: string) =>
    collect(
      client.resubscribeTask({ tenant: '', id: task.id }, { serviceParameters: { 'Last-Event-ID': cursor } }),
    );
  // Cut after the answer, before the final status: the status comes, the answer not again.
  const afterAnswer = await resubscribe(cursorOf(events[answerAt]!)!);
  expect(afterAnswer.map((event) => [event.payload?.$case, stateOf(event)])).toEqual([
    ['task', TaskState.TASK_STATE_COMPLETED],
    ['statusUpdate', TaskState.TASK_STATE_COMPLETED],
  ]);
  // Cut after the final status: the task as it stands, and the stream ends.
  const afterEnd = await resubscribe(cursorOf(events.at(-1)!)!);
  expect(afterEnd.map((event) => [event.payload?.$case, stateOf(event)])).toEqual([
    ['task', TaskState.TASK_STATE_COMPLETED],
  ]);
});

test('the gateway counts A2A requests by method and outcome, the messages it takes, and its open streams', async () => {
  nockModel([{ text: 'Counted.' }], {
    only: (request) => request.messages.some((message) => message.content === 'Count this request'),
  });
  const before = new Map(gatewayMetrics);
  const grew = (name: string, tags: Record<string, string>) =>
    (gatewayMetrics.get(seriesKey(name, tags)) ?? 0) - (before.get(seriesKey(name, tags)) ?? 0);
  const client = await clientFor(TOKENS.caller);
  const openWhileStreaming: Array<number | undefined> = [];
  for await (const _event of client.sendMessageStream(request([textPart('Count this request')])))
    openWhileStreaming.push(gatewayMetrics.get('durable_agent_a2a_streams'));
  expect(openWhileStreaming[0]).toBe(1);
  await expect(client.getTask({ tenant: '', id: 'a2a-none/none', historyLength: 0 })).rejects.toThrow();
  const rpc = (token: string, method: string) =>
    fetch(`${baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
    });
  await rpc('not-a-token', 'GetTask');
  await rpc(TOKENS.caller, `NoSuchMethod-${randomUUID()}`);

  const requests = 'durable_agent_a2a_requests';
  expect(grew(requests, { method: 'SendStreamingMessage', outcome: 'ok' })).toBe(1);
  expect(grew(requests, { method: 'GetTask', outcome: '-32001' })).toBe(1);
  expect(grew(requests, { method: 'GetTask', outcome: '-32099' })).toBe(1);
  // A method no A2A names is `unknown`, whatever the caller called it.
  expect(grew(requests, { method: 'unknown', outcome: '-32601' })).toBe(1);
  expect(grew('durable_agent_a2a_messages', { kind: 'task' })).toBe(1);
  expect(gatewayMetrics.get('durable_agent_a2a_streams')).toBe(0);
  expect(before.get('durable_agent_a2a_streams') ?? 0).toBe(0);
});

test('a caller reaches only what its token allows', async () => {
  nockModel([{ text: 'Mine.' }]);
  const client = await clientFor(TOKENS.caller);
  const mine = await client.sendMessage(request([textPart('A task of the a2a- prefix')]));
  const { id } = mine as unknown as { id: string };
  const outsider = await clientFor(TOKENS.outsider);
  await expect(outsider.getTask({ tenant: '', id, historyLength: 0 })).rejects.toThrow(
    /may not reach conversation/,
  );
  await expect(outsider.cancelTask({ tenant: '', id, metadata: undefined })).rejects.toThrow(
    /may not reach conversation/,
  );
  await expect(
    outsider.sendMessage(request([textPart('into their context')], { contextId: id.split('/')[0]! })),
  ).rejects.toThrow(/may not reach conversation/);
  const reader = await clientFor(TOKENS.reader);
  await expect(reader.sendMessage(request([textPart('a new task')]))).rejects.toThrow(/may not send/);
  const anonymous = await fetch(`${baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } }),
  });
  expect(anonymous.status).toBe(401);
  expect(await anonymous.json()).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32099 } });
});

/** A push notification as a receiver got it. */
interface Pushed {
  headers: IncomingHttpHeaders;
  body: {
    statusUpdate: {
      taskId: string;
      status: { state: string; message?: { parts: Array<{ text?: string }> } };
      metadata: Record<string, string>;
    };
  };
}

/** A receiver of push notifications on 127.0.0.1 (on `port` when given), keeping what it got. */
async function pushReceiver(port = 0): Promise<{ url: string; got: Pushed[]; close(): Promise<void> }> {
  const got: Pushed[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      got.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${bound}/a2a-push`,
    got,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Each notification once (by the id it carries, in its header and its metadata), in the order first received. */
function deduped(got: readonly Pushed[]): Pushed[] {
  const seen = new Map<string, Pushed>();
  for (const each of got) {
    const id = each.headers['durable-agent-delivery'] as string;
    expect(each.body.statusUpdate.metadata['durable-agent/notification-id']).toBe(id);
    if (!seen.has(id)) seen.set(id, each);
  }
  return [...seen.values()];
}

const pushConfig = (taskId: string, fields: { id?: string; url: string; token?: string }) => ({
  tenant: '',
  id: fields.id ?? '',
  taskId,
  url: fields.url,
  token: fields.token ?? '',
  authentication: undefined,
});

test('push notifications: a config set on a task is sent each state, with its token and an id to dedupe; only its owner sees or deletes it', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_a2a_push', name: 'record', arguments: { value: 'ticket-push' } }] },
    { text: 'Recorded ticket-push.' },
  ]);
  const receiver = await pushReceiver();
  try {
    const client = await clientFor(TOKENS.caller);
    const sent = await client.sendMessage({
      ...request([textPart('Record the push ticket')]),
      configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
    });
    const task = sent as unknown as { id: string; contextId: string };
    const set = await client.createTaskPushNotificationConfig(
      pushConfig(task.id, { id: 'desk', url: receiver.url, token: 'push-secret-1' }),
    );
    expect(set).toMatchObject({ id: 'desk', taskId: task.id, url: receiver.url, token: 'push-secret-1' });
    await waitFor(
      async () =>
        receiver.got.some((each) => each.body.statusUpdate.status.state === 'TASK_STATE_INPUT_REQUIRED')
          ? true
          : undefined,
      'the input-required notification',
    );

    // Another token reaching the same context sees none of it, and cannot delete it; one that does not reach it is refused.
    const reader = await clientFor(TOKENS.reader);
    expect(
      (
        await reader.listTaskPushNotificationConfig({
          tenant: '',
          taskId: task.id,
          pageSize: 0,
          pageToken: '',
        })
      ).configs,
    ).toEqual([]);
    await expect(
      reader.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk' }),
    ).rejects.toThrow(/no push notification config/);
    await expect(
      reader.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk' }),
    ).rejects.toThrow(/no push notification config/);
    const outsider = await clientFor(TOKENS.outsider);
    await expect(
      outsider.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk' }),
    ).rejects.toThrow(/may not reach conversation/);
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs).toEqual([
      expect.objectContaining({ id: 'desk', url: receiver.url, token: 'push-secret-1' }),
    ]);
    expect(
      await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk' }),
    ).toMatchObject({ id: 'desk', url: receiver.url });

    const pending = await harness.agent.pendingApprovals(task.contextId);
    await client.sendMessage(
      request(
        [
          dataPart({
            kind: 'approval_decision',
            toolCallId: 'call_a2a_push',
            decision: 'allow_once',
            argumentsSha256: pending[0]!.argumentsSha256,
          }),
        ],
        { taskId: task.id },
      ),
    );
    await waitFor(
      async () =>
        receiver.got.some((each) => each.body.statusUpdate.status.state === 'TASK_STATE_COMPLETED')
          ? true
          : undefined,
      'the completed notification',
    );
    const notifications = deduped(receiver.got);
    for (const each of notifications) {
      expect(each.headers['x-a2a-notification-token']).toBe('push-secret-1');
      expect(each.headers['content-type']).toBe('application/a2a+json');
      expect(each.body.statusUpdate.taskId).toBe(task.id);
    }
    const states = notifications.map((each) => each.body.statusUpdate.status.state);
    // From where the task stood when the config was set: each change once, to the end.
    expect(states.slice(states.indexOf('TASK_STATE_INPUT_REQUIRED'))).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
    expect(notifications.at(-1)!.body.statusUpdate.status.message?.parts[0]?.text).toBe(
      'Recorded ticket-push.',
    );

    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'desk' });
    expect(
      (
        await client.listTaskPushNotificationConfig({
          tenant: '',
          taskId: task.id,
          pageSize: 0,
          pageToken: '',
        })
      ).configs,
    ).toEqual([]);
  } finally {
    await receiver.close();
  }
});

test('push notifications reach a receiver that was down for 10 s while its task completed, each at least once', async () => {
  nockModel([{ text: 'Pushed once the receiver was back.' }], {
    only: (request) =>
      request.messages.some((message) => message.content === 'Tell the receiver that is down'),
  });
  const receiverPort = await freePort();
  const url = `http://127.0.0.1:${receiverPort}/a2a-push`;
  const client = await clientFor(TOKENS.caller);
  const downSince = Date.now();
  const sent = await client.sendMessage({
    ...request([textPart('Tell the receiver that is down')]),
    configuration: {
      acceptedOutputModes: [],
      returnImmediately: true,
      taskPushNotificationConfig: pushConfig('', { url, token: 'push-secret-2' }),
    } as never,
  });
  const task = sent as unknown as { id: string; contextId: string };
  await waitFor(async () => {
    const polled = await client.getTask({ tenant: '', id: task.id, historyLength: 0 });
    return polled.status?.state === TaskState.TASK_STATE_COMPLETED ? true : undefined;
  }, 'the task to complete');
  const retrying = async () => {
    const described = await harness.client.workflow.getHandle(task.contextId).describe();
    return described.raw.pendingActivities ?? [];
  };
  // Down for 10 s, and the notifications have been tried and failed meanwhile.
  await waitFor(
    async () =>
      Date.now() - downSince >= 10_000 && (await retrying()).some((activity) => (activity.attempt ?? 0) > 1)
        ? true
        : undefined,
    'ten seconds of a receiver down',
  );
  const receiver = await pushReceiver(receiverPort);
  try {
    await waitFor(
      async () => ((await retrying()).length === 0 ? true : undefined),
      'every notification delivered',
    );
    const notifications = deduped(receiver.got);
    const states = notifications.map((each) => each.body.statusUpdate.status.state);
    expect(states).toContain('TASK_STATE_COMPLETED');
    expect(new Set(states).size).toBe(states.length);
    expect(states.every((state) => state === 'TASK_STATE_WORKING' || state === 'TASK_STATE_COMPLETED')).toBe(
      true,
    );
    expect(receiver.got.every((each) => each.headers['x-a2a-notification-token'] === 'push-secret-2')).toBe(
      true,
    );
  } finally {
    await receiver.close();
  }
}, 90_000);

test('a push URL to a private, loopback or metadata address is refused unless the operator allows it; configs and their values are bounded', async () => {
  nockModel([{ text: 'Bounded.' }]);
  const strictPort = await freePort();
  const strict = createGateway(gatewayDeps(false));
  await strict.listen({ port: strictPort, host: '127.0.0.1' });
  const receiver = await pushReceiver();
  try {
    const client = await clientFor(TOKENS.caller);
    const sent = await client.sendMessage(request([textPart('A task to push about')]));
    const task = sent as unknown as { id: string; contextId: string };
    const rpc = async (method: string, params: unknown, at = strictPort, token = TOKENS.caller) =>
      (await (
        await fetch(`http://127.0.0.1:${at}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).json()) as { result?: unknown; error?: { code: number; message: string } };
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://localhost:9/hook',
      'http://169.254.169.254/latest',
      'http://[::1]:9/',
      'http://10.1.2.3/',
    ]) {
      const answer = await rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url });
      expect(answer.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/private, loopback or reserved/),
      });
    }
    // Given with a message, refused before the message is taken.
    const inline = await rpc('SendMessage', {
      message: { messageId: 'push-refused', role: 'ROLE_USER', parts: [{ text: 'not taken' }] },
      configuration: { taskPushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } },
    });
    expect(inline.error?.message).toMatch(/private, loopback or reserved/);

    // Through the gateway that allows them: bounded all the same.
    const create = (fields: Record<string, unknown>) =>
      rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url: receiver.url, ...fields }, port);
    expect((await create({ url: `http://127.0.0.1:9/${'x'.repeat(2_100)}` })).error?.code).toBe(-32602);
    expect((await create({ token: 't'.repeat(1_100) })).error?.code).toBe(-32602);
    expect((await create({ token: 'line\r\nx-injected: 1' })).error?.code).toBe(-32602);
    expect(
      (await create({ authentication: { scheme: 'Bearer', credentials: 'key\r\nx-injected: 1' } })).error
        ?.code,
    ).toBe(-32602);
    expect((await create({ authentication: { scheme: 'Bearer key', credentials: 'k' } })).error?.code).toBe(
      -32602,
    );
    // Setting a push config follows the task: a token without `events` may not, also with a message.
    const sender = await rpc(
      'SendMessage',
      {
        message: { messageId: 'push-by-sender', role: 'ROLE_USER', parts: [{ text: 'not taken either' }] },
        configuration: { taskPushNotificationConfig: { url: receiver.url } },
      },
      port,
      TOKENS.sender,
    );
    expect(sender.error).toMatchObject({ code: -32099, message: expect.stringMatching(/may not events/) });
    expect((await create({ url: 'file:///etc/passwd' })).error?.code).toBe(-32602);
    expect((await create({ taskId: `${task.contextId}/never-sent` })).error?.code).toBe(-32001);
    for (let index = 0; index < 10; index++)
      expect((await create({ id: `cfg-${index}` })).error).toBeUndefined();
    expect((await create({ id: 'cfg-10' })).error?.message).toMatch(/at most 10 push notification configs/);
  } finally {
    await strict.close();
    await receiver.close();
  }
});

test('push configs live in the conversation: a run that hands over to a fresh history mid-task is still pushed to the end', async () => {
  const turns = 8;
  nockModel(
    [
      ...Array.from({ length: turns }, (_, index) => ({
        toolCalls: [{ id: `call_handover_${index}`, name: 'ticker', arguments: { ticks: 1, everyMs: 5 } }],
      })),
      { text: 'Done after the hand-over.' },
    ],
    { only: (request) => request.messages.some((message) => message.content === 'Work through a hand-over') },
  );
  const contextId = `a2a-push-handover-${randomUUID()}`;
  await harness.agent.start(contextId, { maxHistoryEvents: 50 });
  const firstExecution = (await harness.client.workflow.getHandle(contextId).describe()).runId;
  const receiver = await pushReceiver();
  try {
    const client = await clientFor(TOKENS.caller);
    const sent = await client.sendMessage({
      ...request([textPart('Work through a hand-over')], { contextId }),
      configuration: {
        acceptedOutputModes: [],
        returnImmediately: true,
        taskPushNotificationConfig: pushConfig('', { id: 'kept', url: receiver.url, token: 'push-secret-3' }),
      } as never,
    });
    const task = sent as unknown as { id: string };
    await waitFor(
      async () =>
        receiver.got.some((each) => each.body.statusUpdate.status.state === 'TASK_STATE_COMPLETED')
          ? true
          : undefined,
      'the completed notification',
    );
    const lastExecution = (await harness.client.workflow.getHandle(contextId).describe()).runId;
    expect(lastExecution).not.toBe(firstExecution);
    const notifications = deduped(receiver.got);
    const completed = notifications.find(
      (each) => each.body.statusUpdate.status.state === 'TASK_STATE_COMPLETED',
    )!;
    // Sent by the execution after the hand-over, from the config it was handed.
    expect(completed.headers['durable-agent-delivery']).toContain(`/${lastExecution}/`);
    expect(completed.headers['x-a2a-notification-token']).toBe('push-secret-3');
    expect(notifications.map((each) => each.body.statusUpdate.status.state)).toEqual([
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((config) => config.id)).toEqual(['kept']);
  } finally {
    await receiver.close();
  }
});

test('a context has at most 64 tasks with push configs while they run; one that has ended makes room', async () => {
  nockModel(
    [
      { toolCalls: [{ id: 'call_push_many', name: 'ticker', arguments: { ticks: 1_200, everyMs: 50 } }] },
      { text: 'All of them at once.' },
    ],
    { only: (request) => request.messages.some((message) => message.content === 'Keep the context busy') },
  );
  const receiver = await pushReceiver();
  try {
    const client = await clientFor(TOKENS.caller);
    const busy = (await client.sendMessage({
      ...request([textPart('Keep the context busy')]),
      configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
    })) as unknown as { id: string; contextId: string };
    const { contextId } = busy;
    // Queued behind the busy run: submitted, each with a config.
    const queued: string[] = [];
    for (let index = 0; index < 65; index++) {
      const sent = await client.sendMessage({
        ...request([textPart(`queued ${index}`)], { contextId }),
        configuration: { acceptedOutputModes: [], returnImmediately: true } as never,
      });
      queued.push((sent as unknown as { id: string }).id);
    }
    const setOn = (taskId: string) =>
      client.createTaskPushNotificationConfig(pushConfig(taskId, { id: 'many', url: receiver.url }));
    for (const taskId of queued.slice(0, 64)) await setOn(taskId);
    await expect(setOn(queued[64]!)).rejects.toThrow(/at most 64 tasks/);

    await client.cancelTask({ tenant: '', id: busy.id, metadata: undefined });
    await waitFor(async () => {
      const polled = await client.getTask({ tenant: '', id: queued[63]!, historyLength: 0 });
      return polled.status?.state === TaskState.TASK_STATE_COMPLETED ? true : undefined;
    }, 'the queued tasks to complete');
    await setOn(queued[64]!);
  } finally {
    await receiver.close();
  }
}, 120_000);
/** The Python of the venv the global setup installs the Python A2A SDK into, or undefined. */
const ROOT = path.resolve(__dirname, '..', '..');
const python =
  spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'install-a2a-python-sdk.mjs'), '--find'], {
    encoding: 'utf8',
    timeout: 60_000,
  }).stdout.trim() || undefined;
const withPython = python || inCi() ? test : test.skip;
if (!python && !inCi())
  console.warn(
    'skipping the Python A2A caller: no Python A2A SDK (installed by the global setup from PyPI; needs python3 with venv)',
  );

interface PythonEvent {
  kind: string;
  taskId: string;
  state?: string;
  text?: string;
  artifactId?: string;
  data?: Array<Record<string, unknown>>;
}
interface PythonTask {
  state: string;
  answer: string;
  history: string[][];
}

withPython(
  'a Python caller (a2a-sdk) streams a task to completed, polls one, answers an approval and cancels one',
  async () => {
    if (!python)
      throw new Error('the Python A2A caller needs the Python A2A SDK, installed by the global setup');
    const mine = (text: string) => (request: { messages: Array<{ content?: unknown }> }) =>
      request.messages.some((message) => message.content === text);
    const answer = 'Python hears the desk is open from nine.';
    nockModel([{ text: answer, textChunks: 4, chunkDelayMs: 30 }], {
      only: mine('Python: when is the desk open?'),
    });
    nockModel([{ text: 'Polled from Python.' }], { only: mine('Python: answer when polled') });
    nockModel(
      [
        { toolCalls: [{ id: 'call_py_record', name: 'record', arguments: { value: 'ticket-7' } }] },
        { text: 'Recorded ticket-7.' },
      ],
      { only: mine('Python: record ticket 7') },
    );
    nockModel(
      [{ toolCalls: [{ id: 'call_py_tick', name: 'ticker', arguments: { ticks: 600, everyMs: 50 } }] }],
      { only: mine('Python: count for a while') },
    );
    const { stdout } = await promisify(execFile)(
      python,
      [path.join(ROOT, 'test', 'fixtures', 'a2a-python-peer.py'), baseUrl],
      { env: { A2A_TOKEN: TOKENS.caller, PATH: process.env.PATH }, timeout: 90_000 },
    );
    const report = JSON.parse(stdout) as {
      card: { name: string; streaming: boolean; interfaces: string[][]; skills: string[] };
      streamed: { events: PythonEvent[]; polled: PythonTask };
      polled: { sent: PythonEvent; polled: PythonTask };
      approved: { asked: PythonEvent[]; answered: PythonEvent[] };
      canceled: { state: string; text: string; cancelAgain: string | null };
      problems: string[];
    };
    // Every answer, read strictly as A2A's messages: no field the protocol lacks, no value of another type.
    expect(report.problems).toEqual([]);
    expect(report.card).toEqual({
      name: 'Ticket desk',
      streaming: true,
      interfaces: [['JSONRPC', '1.0']],
      skills: ['tickets'],
    });

    const states = (events: PythonEvent[]) => events.flatMap((event) => (event.state ? [event.state] : []));
    const { events } = report.streamed;
    expect(events[0]).toMatchObject({ kind: 'task', contextId: expect.stringMatching(/^a2a-/) });
    expect(states(events)).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    const streamedText = events
      .filter((event) => event.artifactId?.startsWith('text-'))
      .map((event) => event.text)
      .join('');
    expect(streamedText).toBe(answer);
    expect(report.streamed.polled).toEqual({
      state: 'TASK_STATE_COMPLETED',
      answer,
      history: [
        ['ROLE_USER', 'Python: when is the desk open?'],
        ['ROLE_AGENT', answer],
      ],
    });

    expect(report.polled.sent.kind).toBe('task');
    expect(report.polled.polled).toMatchObject({
      state: 'TASK_STATE_COMPLETED',
      answer: 'Polled from Python.',
    });

    const waiting = report.approved.asked.at(-1)!;
    expect(waiting.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(waiting.data).toEqual([
      expect.objectContaining({
        kind: 'approval_request',
        toolCallId: 'call_py_record',
        argumentsSha256: sha256('{"value":"ticket-7"}'),
      }),
    ]);
    expect(states(report.approved.answered).at(-1)).toBe('TASK_STATE_COMPLETED');
    expect(recorded.get('call_py_record')).toBe('ticket-7');
    const contextId = report.approved.asked[0]!.taskId.split('/')[0]!;
    expect(
      (await harness.agent.events(contextId)).find((event) => event.type === 'approval_decided'),
    ).toMatchObject({
      by: 'a2a-caller',
      decision: 'allow_once',
      reason: 'checked by python',
    });

    expect(report.canceled).toEqual({
      state: 'TASK_STATE_CANCELED',
      text: expect.stringMatching(/canceled by a2a-caller/),
      cancelAgain: 'TaskNotCancelableError',
    });
  },
  120_000,
);
