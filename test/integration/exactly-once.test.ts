import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { MessageIdConflictError } from '../../src/shared/conversation-errors';
import {
  eventsQuery,
  messageReceiptQuery,
  stateQuery,
  steerSignal,
  steerUpdate,
  userMessageSignal,
} from '../../src/shared/conversation-api';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

/**
 * A message is taken once however often it is delivered: signals repeated by a retrying sender,
 * the client's own retries, the gateway's Idempotency-Key. What the model is asked is the proof.
 */
const harness = useNockedHarness([echoTool]);

const userTexts = (request: ChatRequest) =>
  request.messages.filter((message) => message.role === 'user').map((message) => message.content);
const answerSeen = (request: ChatRequest) => ({ text: `seen ${userTexts(request).join(' | ')}` });
const signal = (id: string, text: string, messageId: string) =>
  harness().client.workflow.getHandle(id).signal(userMessageSignal, { text, messageId });

async function runsFinished(id: string, count: number): Promise<void> {
  await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished', (event) => event.run === count);
}

test('a user message signalled twice runs once: delivered together, during the run it started, and after it', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const model = nockModel([answerSeen, answerSeen], { delayFirstMs: 1_500 });

  await harness().agent.start(id);
  await Promise.all([signal(id, 'first', 'm-1'), signal(id, 'first', 'm-1')]);
  // While the first run's model call is held back: the same message again.
  await waitFor(async () => (await handle.query(stateQuery)).status === 'running' || undefined, 'the run');
  await signal(id, 'first', 'm-1');
  await runsFinished(id, 1);
  await signal(id, 'first', 'm-1');
  await signal(id, 'second', 'm-2');
  await runsFinished(id, 2);

  expect(model.requests.map(userTexts)).toEqual([['first'], ['first', 'second']]);
  const state = await handle.query(stateQuery);
  expect(state.runCount).toBe(2);
  expect(state.queuedMessages).toBe(0);
  // A repeat of the same message leaves no trace in the events; the receipt says where it was taken.
  expect(state.events.filter((event) => event.type === 'error')).toEqual([]);
  await expect(handle.query(messageReceiptQuery, 'm-1')).resolves.toMatchObject({ afterRun: 0 });
  await expect(handle.query(messageReceiptQuery, 'm-2')).resolves.toMatchObject({ afterRun: 1 });
  await expect(handle.query(messageReceiptQuery, 'm-unknown')).resolves.toBeNull();
});

test('another message under a taken id is not taken, and the conversation says why', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const model = nockModel([answerSeen, answerSeen]);
  await harness().agent.send(id, 'first', { messageId: 'm-1' });
  await runsFinished(id, 1);

  await signal(id, 'not the first', 'm-1');
  await expect(harness().agent.send(id, 'not the first either', { messageId: 'm-1' })).rejects.toThrow(
    MessageIdConflictError,
  );
  await expect(
    handle.executeUpdate(steerUpdate, { args: [{ text: 'a steer', messageId: 'm-1' }] }),
  ).rejects.toMatchObject({ cause: { message: 'message id m-1 was taken before for another message' } });
  await harness().agent.send(id, 'second', { messageId: 'm-2' });
  await runsFinished(id, 2);

  expect(model.requests.map(userTexts)).toEqual([['first'], ['first', 'second']]);
  const errors = (await handle.query(eventsQuery, 0)).filter((event) => event.type === 'error');
  expect(errors.map((event) => (event as { message: string }).message)).toEqual([
    'userMessage ignored: message id m-1 was taken before for another message',
  ]);
});

test("a client's send retried with the same message id is answered as the first and runs once", async () => {
  const id = `conv-${randomUUID()}`;
  const model = nockModel([answerSeen, answerSeen]);
  const first = await harness().agent.send(id, 'first', { messageId: 'm-1' });
  await runsFinished(id, 1);
  const second = await harness().agent.send(id, 'second', { messageId: 'm-2' });
  const retried = await harness().agent.send(id, 'second', { messageId: 'm-2' });
  await runsFinished(id, 2);

  expect(first).toMatchObject({ started: true, afterRun: 0 });
  expect(second.duplicate).toBeUndefined();
  expect(retried).toEqual({ ...second, duplicate: true });
  // Following the retry's answer finds the run that took the message.
  const following = harness().agent.followRun(retried);
  let next = await following.next();
  while (!next.done) next = await following.next();
  expect(next.value).toMatchObject({ how: 'finished', event: { run: 2, answer: 'seen first | second' } });
  expect(model.requests.map(userTexts)).toEqual([['first'], ['first', 'second']]);
});

test('steering retried with its id steers once', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const model = nockModel([{ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, answerSeen], {
    delayFirstMs: 1_500,
  });
  await harness().agent.send(id, 'first', { messageId: 'm-1' });
  await waitFor(async () => (await handle.query(stateQuery)).status === 'running' || undefined, 'the run');
  const steered = await harness().agent.steer(id, 'only this', { messageId: 's-1' });
  const again = await handle.executeUpdate(steerUpdate, { args: [{ text: 'only this', messageId: 's-1' }] });
  await handle.signal(steerSignal, { text: 'only this', messageId: 's-1' });
  await runsFinished(id, 1);

  expect(steered.duplicate).toBeUndefined();
  expect(again).toEqual({ messageId: 's-1', interrupting: false, duplicate: true });
  expect(userTexts(model.requests.at(-1)!)).toEqual(['first', 'only this']);
});

test('a message repeated after the conversation continued as new is still taken once', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const echo = (turn: number) => ({ toolCalls: [{ name: 'echo', arguments: { text: `t${turn}` } }] });
  // Enough turns to pass 50 history events, so the conversation hands over between the two runs.
  const model = nockModel([...Array.from({ length: 8 }, (_, turn) => echo(turn)), answerSeen, answerSeen]);
  await harness().agent.send(id, 'first', { messageId: 'm-1', options: { maxHistoryEvents: 50 } });
  await runsFinished(id, 1);
  await waitFor(async () => {
    const { runId, raw } = await handle.describe();
    return raw.workflowExecutionInfo?.firstRunId !== runId || undefined;
  }, 'the conversation to continue as new');

  await signal(id, 'first', 'm-1');
  await expect(harness().agent.send(id, 'first', { messageId: 'm-1' })).resolves.toMatchObject({
    duplicate: true,
  });
  await signal(id, 'second', 'm-2');
  await runsFinished(id, 2);

  expect(userTexts(model.requests.at(-1)!)).toEqual(['first', 'second']);
  expect((await handle.query(stateQuery)).runCount).toBe(2);
});

describe('the gateway', () => {
  const token = `tok-${randomUUID()}`;
  let gateway: FastifyInstance;
  let url: string;
  beforeAll(async () => {
    gateway = createGateway({
      agent: harness().agent,
      tokens: new GatewayTokens([
        {
          name: 'service',
          sha256: createHash('sha256').update(token).digest('hex'),
          actions: ['*'],
          conversationPrefixes: ['keyed-'],
        },
      ]),
    });
    url = await gateway.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gateway.close());

  const post = (path: string, body: unknown, key?: string) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(key !== undefined ? { 'idempotency-key': key } : {}),
      },
      body: JSON.stringify(body),
    });
  const answer = async (response: Response) => ({
    status: response.status,
    replayed: response.headers.get('idempotent-replayed'),
    body: (await response.json()) as Record<string, unknown>,
  });

  test('a start with a first message, retried with its Idempotency-Key, makes one conversation and one run', async () => {
    const model = nockModel([answerSeen]);
    const key = `start-${randomUUID()}`;
    const first = await answer(await post('/v1/conversations', { text: 'hello' }, key));
    const retried = await answer(await post('/v1/conversations', { text: 'hello' }, key));
    const changed = await answer(await post('/v1/conversations', { text: 'hello again' }, key));

    expect(first).toMatchObject({ status: 201, replayed: null });
    expect(retried).toEqual({ ...first, replayed: 'true' });
    expect(changed.status).toBe(409);
    const id = first.body.conversationId as string;
    expect(id).toMatch(/^keyed-/);
    await runsFinished(id, 1);
    expect(model.requests.map(userTexts)).toEqual([['hello']]);
  });

  test('a message retried with its Idempotency-Key or its messageId runs once; the key with another body is refused', async () => {
    const id = `keyed-${randomUUID()}`;
    const model = nockModel([answerSeen, answerSeen]);
    await harness().agent.start(id);
    const key = `msg-${randomUUID()}`;
    const first = await answer(await post(`/v1/conversations/${id}/messages`, { text: 'one' }, key));
    await runsFinished(id, 1);
    const retried = await answer(await post(`/v1/conversations/${id}/messages`, { text: 'one' }, key));
    const otherBody = await answer(await post(`/v1/conversations/${id}/messages`, { text: 'two' }, key));
    const both = await answer(
      await post(`/v1/conversations/${id}/messages`, { text: 'one', messageId: 'x' }, key),
    );
    const byId = { text: 'two', messageId: `id-${randomUUID()}` };
    const sent = await answer(await post(`/v1/conversations/${id}/messages`, byId));
    const sentAgain = await answer(await post(`/v1/conversations/${id}/messages`, byId));
    await runsFinished(id, 2);

    expect(first).toMatchObject({ status: 202, replayed: null });
    expect(retried).toEqual({ ...first, replayed: 'true' });
    expect(otherBody.status).toBe(409);
    expect(otherBody.body.error).toMatch(/took message .* before, with other content/);
    expect(both.status).toBe(400);
    expect(sentAgain).toEqual({ ...sent, replayed: 'true' });
    expect(model.requests.map(userTexts)).toEqual([['one'], ['one', 'two']]);
  });
});
