import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import nock from 'nock';
import type { FastifyInstance } from 'fastify';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { freePort } from '../../src/platform/free-port';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import type { ChatRequest } from '../support/scripted-model';
import { recordTool, recorded } from '../support/test-tools';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * A service that is not a Temporal client drives a conversation through the gateway: the worker
 * tells it by a signed webhook that a call waits, it checks the signature in a process of its own
 * and approves through the gateway with its token; the gateway signs the decision as the token's
 * identity, which is what the worker's approver keys expect.
 */
const gatewayKey = generateKeyPairSync('ed25519');
const SECRET = `whsec-${randomUUID()}`;
const TOKENS = {
  receiver: `tok-receiver-${randomUUID()}`,
  reader: `tok-reader-${randomUUID()}`,
  desk: `tok-desk-${randomUUID()}`,
  otherAgent: `tok-other-${randomUUID()}`,
  expired: `tok-expired-${randomUUID()}`,
};
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let harness: TestHarness;
let gateway: FastifyInstance;
let gatewayUrl: string;
let receiver: ChildProcess;
const receiverLines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  receiver = spawn(process.execPath, [path.join(__dirname, '../support/webhook-receiver.mjs')], {
    env: { ...process.env, WEBHOOK_SECRET: SECRET, GATEWAY_TOKEN: TOKENS.receiver },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  createInterface({ input: receiver.stdout! }).on('line', (line) => receiverLines.push(JSON.parse(line)));
  const { port } = await waitFor(
    async () => receiverLines.find((line) => 'port' in line),
    'the receiver to listen',
  );
  const gatewayPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    tools: [recordTool],
    approverKeys: {
      'ticket-bot': rawPublicKey(
        gatewayKey.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        'gw',
      ),
    },
    webhooks: [
      {
        url: `http://127.0.0.1:${String(port)}/hooks`,
        events: ['approval_requested', 'run_finished', 'conversation_ended'],
        secret: SECRET,
      },
    ],
    gatewayUrl,
  });
  gateway = createGateway({
    agent: harness.agent,
    signingKey: gatewayKey.privateKey,
    eventPollMs: 50,
    tokens: new GatewayTokens([
      {
        name: 'ticket-bot',
        sha256: sha256(TOKENS.receiver),
        actions: ['*'],
        conversationPrefixes: ['tickets-'],
      },
      { name: 'dashboard', token: TOKENS.reader, actions: ['status', 'events'] },
      {
        name: 'ticket-bot',
        token: TOKENS.desk,
        actions: ['approve', 'status'],
        conversationPrefixes: ['held-'],
      },
      { name: 'other-team', token: TOKENS.otherAgent, actions: ['*'], agents: ['other-agent'] },
      { name: 'old', token: TOKENS.expired, actions: ['*'], expiresAt: '2020-01-01T00:00:00Z' },
    ]),
  });
  await gateway.listen({ port: gatewayPort, host: '127.0.0.1' });
});

afterEach(() => nock.cleanAll());

afterAll(async () => {
  receiver?.kill();
  await gateway?.close();
  await harness?.close();
  nock.cleanAll();
  nock.enableNetConnect();
});

async function call(method: string, route: string, token: string | undefined, body?: unknown) {
  const response = await fetch(`${gatewayUrl}${route}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('a webhook tells a service a call waits; it checks the signature and approves through the gateway; the tool runs', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_ticket', name: 'record', arguments: { value: 'ticket-4711' } }] },
    { text: 'Recorded the ticket.' },
  ]);
  const started = await call('POST', '/v1/conversations', TOKENS.receiver, { text: 'record ticket 4711' });
  expect(started.status).toBe(201);
  const id = started.body.conversationId as string;
  expect(id.startsWith('tickets-')).toBe(true);

  await waitFor(async () => recorded.get('call_ticket'), 'the approved call to run');
  expect(recorded.get('call_ticket')).toBe('ticket-4711');
  const finished = await waitFor(
    async () =>
      receiverLines.find((line) => line.type === 'run_finished' && (line.data as { answer?: string }).answer),
    'the run_finished webhook',
  );
  expect(finished).toMatchObject({
    verified: true,
    data: { outcome: 'answered', answer: 'Recorded the ticket.' },
  });
  const requested = receiverLines.find((line) => line.type === 'approval_requested');
  expect(requested).toMatchObject({
    verified: true,
    data: {
      toolName: 'record',
      arguments: '{"value":"ticket-4711"}',
      argumentsSha256: sha256('{"value":"ticket-4711"}'),
    },
  });
  expect(receiverLines.find((line) => 'approved' in line)).toMatchObject({
    approved: 200,
    answer: { decision: 'allow_once' },
  });
  expect(receiverLines.some((line) => line.verified === false)).toBe(false);

  // The decision was made by the token's identity, and the message was sent as it.
  const state = await harness.agent.state(id);
  expect(state.events.find((event) => event.type === 'approval_decided')).toMatchObject({
    by: 'ticket-bot',
    decision: 'allow_once',
  });
  expect(state.transcript.find((message) => message.role === 'user')).toMatchObject({ sender: 'ticket-bot' });

  // Events stream as server-sent events, resumable from a sequence number.
  const stream = await fetch(`${gatewayUrl}/v1/conversations/${id}/events`, {
    headers: { authorization: `Bearer ${TOKENS.reader}`, 'last-event-id': '2' },
  });
  expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
  const reader = stream.body!.getReader();
  let text = '';
  while (!/event: run_finished/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const ids = [...text.matchAll(/^id: (\d+)$/gm)].map(([, seq]) => Number(seq));
  expect(ids[0]).toBe(3);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));

  // Ending the conversation is one more webhook.
  expect((await call('POST', `/v1/conversations/${id}/end`, TOKENS.receiver, {})).status).toBe(202);
  await waitFor(
    async () => receiverLines.find((line) => line.type === 'conversation_ended'),
    'conversation_ended',
  );
});

test('the gateway refuses what a token may not do, and a decision for other arguments, leaving the conversation as it was', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_held', name: 'record', arguments: { value: 'held' } }] },
    { text: 'ok' },
  ]);
  // The receiver hears of this call too, but its token reaches only tickets- conversations.
  const id = `held-${randomUUID()}`;
  await harness.agent.send(id, 'record held', { options: {} });
  const pending = await waitFor(async () => {
    const all = await harness.agent.pendingApprovals(id);
    return all.find((approval) => approval.toolCallId === 'call_held');
  }, 'the held call');
  const decide = (token: string | undefined, body: Record<string, unknown>) =>
    call('POST', `/v1/conversations/${id}/approvals/call_held`, token, body);
  const good = { decision: 'allow_once', argumentsSha256: pending.argumentsSha256 };

  expect(await decide(undefined, good)).toMatchObject({
    status: 401,
    body: { error: expect.stringMatching(/Bearer/) },
  });
  expect(await decide('not-a-token', good)).toMatchObject({ status: 401, body: { error: 'unknown token' } });
  expect(await decide(TOKENS.expired, good)).toMatchObject({
    status: 401,
    body: { error: expect.stringMatching(/expired/) },
  });
  expect(await decide(TOKENS.reader, good)).toMatchObject({
    status: 403,
    body: { error: expect.stringMatching(/may not approve/) },
  });
  expect(await decide(TOKENS.otherAgent, good)).toMatchObject({
    status: 403,
    body: { error: expect.stringMatching(/may not act for agent default/) },
  });
  expect(await decide(TOKENS.receiver, good)).toMatchObject({
    status: 403,
    body: { error: expect.stringMatching(/may not reach conversation held-/) },
  });
  expect(await decide(TOKENS.desk, { ...good, argumentsSha256: 'e'.repeat(64) })).toMatchObject({
    status: 409,
    body: { error: expect.stringMatching(/for other arguments/) },
  });
  expect(await decide(TOKENS.desk, { decision: 'allow_once' })).toMatchObject({
    status: 400,
    body: { error: expect.stringMatching(/argumentsSha256/) },
  });
  // A name in the body is not an identity: the body may not name one, and a forged signature fails.
  expect(await decide(TOKENS.desk, { ...good, by: 'admin' })).toMatchObject({
    status: 400,
    body: { error: expect.stringMatching(/unknown key "by"/) },
  });
  expect(
    await decide(TOKENS.desk, {
      ...good,
      signature: 'A'.repeat(88),
      signatureExpiresAt: Date.now() + 60_000,
    }),
  ).toMatchObject({
    status: 409,
    body: { error: expect.stringMatching(/not ticket-bot's/) },
  });
  expect(await call('POST', '/v1/conversations', TOKENS.receiver, { id: 'elsewhere-1' })).toMatchObject({
    status: 403,
  });
  expect(
    await call('POST', '/v1/conversations', TOKENS.otherAgent, { options: { agentId: 'default' } }),
  ).toMatchObject({
    status: 403,
  });
  expect(await call('GET', '/v1/conversations/tickets-missing', TOKENS.receiver)).toMatchObject({
    status: 404,
  });

  expect(await harness.agent.pendingApprovals(id)).toHaveLength(1);
  expect(recorded.has('call_held')).toBe(false);
  await waitFor(
    async () => receiverLines.find((line) => line.approved === 403),
    'the receiver, told of the held call, to be refused by the gateway',
  );
  expect(recorded.has('call_held')).toBe(false);
  expect(await decide(TOKENS.desk, { ...good, decision: 'reject_once' })).toMatchObject({ status: 200 });
});

test('/healthz answers a probe without a token, and says nothing but that the gateway serves', async () => {
  const response = await fetch(`${gatewayUrl}/healthz`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ live: true });
});

test('the OpenAPI document describes every route with the bodies the gateway checks', async () => {
  const response = await fetch(`${gatewayUrl}/openapi.json`);
  const document = (await response.json()) as {
    paths: Record<
      string,
      Record<string, { requestBody?: { content: Record<string, { schema: { required?: string[] } }> } }>
    >;
  };
  expect(Object.keys(document.paths)).toEqual(
    expect.arrayContaining([
      '/v1/conversations',
      '/v1/conversations/{id}/approvals/{toolCallId}',
      '/v1/conversations/{id}/events',
    ]),
  );
  const approve = document.paths['/v1/conversations/{id}/approvals/{toolCallId}']!.post!;
  expect(approve.requestBody!.content['application/json']!.schema.required).toEqual(
    expect.arrayContaining(['decision', 'argumentsSha256']),
  );
});

test('the event stream carries the model’s text as it streams (without ids, so resuming skips it) and ends with the conversation', async () => {
  const answer = Array.from({ length: 30 }, (_, index) => `word${index}`).join(' ');
  // Conversations of the tests before may still call the model: they are answered briefly.
  const step = (request: ChatRequest) =>
    request.messages.some((message) => message.content === 'Say thirty words')
      ? { text: answer, textChunks: 10, chunkDelayMs: 50 }
      : { text: 'ok' };
  nockModel(Array.from({ length: 5 }, () => step));
  const id = `stream-${randomUUID()}`;
  await harness.agent.start(id);
  const stream = await fetch(`${gatewayUrl}/v1/conversations/${id}/events`, {
    headers: { authorization: `Bearer ${TOKENS.reader}` },
  });
  const reader = stream.body!.getReader();
  await harness.agent.send(id, 'Say thirty words');
  let text = '';
  while (!/event: run_finished/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  await harness.agent.end(id);
  while (!/event: end/.test(text)) text += new TextDecoder().decode((await reader.read()).value);

  const frames = text.split('\n\n').filter((frame) => frame.includes('event: model_text'));
  expect(frames.length).toBeGreaterThan(1);
  expect(frames.every((frame) => !/^id: /m.test(frame))).toBe(true);
  const pieces = frames.map((frame) => JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as { text: string });
  expect(pieces.map((piece) => piece.text).join('')).toBe(answer);
  expect(text).toMatch(/event: end\ndata: \{"executionStatus":"COMPLETED"\}/);
});

test('the client library’s errors are answered by their class: an id used before 409, a malformed id 400', async () => {
  const id = `tickets-${randomUUID()}`;
  expect((await call('POST', '/v1/conversations', TOKENS.receiver, { id })).status).toBe(201);
  expect(await call('POST', '/v1/conversations', TOKENS.receiver, { id })).toEqual({
    status: 409,
    body: { error: `conversation ${id} already exists` },
  });
  expect(await call('POST', '/v1/conversations', TOKENS.receiver, { id: 'tickets-not an id' })).toEqual({
    status: 400,
    body: {
      error:
        "invalid conversation id \"tickets-not an id\": use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
    },
  });
  await harness.agent.end(id);
});

test('a service raises a budget through the gateway; the raise is signed with the decision, so the worker takes it', async () => {
  nockModel([{ text: 'Answered in the extra time.' }]);
  // The desk's token (ticket-bot, whose signature the worker takes) decides held- conversations, which the receiver cannot.
  const id = `held-${randomUUID()}`;
  await harness.agent.send(id, 'quick', { options: { budget: { deadlineMs: 1 } } });
  const pending = await waitFor(async () => {
    const { body } = await call('GET', `/v1/conversations/${id}/approvals`, TOKENS.desk);
    const { pending } = body as {
      pending: Array<{ toolCallId: string; argumentsSha256: string; budget?: unknown }>;
    };
    return pending.find((approval) => approval.toolCallId === 'budget-1');
  }, 'the budget pause');
  expect(pending.budget).toMatchObject({ kind: 'deadlineMs', limit: 1 });

  const decided = await call('POST', `/v1/conversations/${id}/approvals/budget-1`, TOKENS.desk, {
    decision: 'allow_once',
    argumentsSha256: pending.argumentsSha256,
    raise: { deadlineMs: 600_000 },
  });
  expect(decided).toMatchObject({ status: 200, body: { toolCallId: 'budget-1', decision: 'allow_once' } });
  const finished = await waitFor(async () => {
    const events = await harness.agent.events(id);
    return events.find((event) => event.type === 'run_finished');
  }, 'the run to finish');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Answered in the extra time.' });
  expect((await harness.agent.status(id)).budget?.limits.deadlineAt).toBeGreaterThan(Date.now() + 500_000);
});
