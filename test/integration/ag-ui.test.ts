import { createHash, randomUUID } from 'node:crypto';
import { type BaseEvent, HttpAgent } from '@ag-ui/client';
import type { FastifyInstance } from 'fastify';
import nock from 'nock';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { createGateway } from '../../src/http/gateway-app';
import { freePort } from '../../src/platform/free-port';
import { recordTool, recorded } from '../support/test-tools';
import { UpdateRefusedError } from '../../src/shared/conversation-errors';
import { postRunInput, typesOf } from '../support/ag-ui-stream';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { followToEnd } from '../support/ask';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * Tools a page offers (client tools) and the AG-UI endpoint on the gateway: the model calls a
 * page's tool, the run waits in the workflow for the page's result, and takes it once.
 */
let harness: TestHarness;
let gateway: FastifyInstance;
let agUiUrl: string;
const TOKENS = {
  page: `tok-page-${randomUUID()}`,
  reader: `tok-reader-${randomUUID()}`,
  elsewhere: `tok-elsewhere-${randomUUID()}`,
};
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, tools: [recordTool] });
  const port = await freePort();
  agUiUrl = `http://127.0.0.1:${port}/v1/ag-ui`;
  gateway = createGateway({
    agent: harness.agent,
    eventPollMs: 50,
    tokens: new GatewayTokens([
      { name: 'page-user', token: TOKENS.page, actions: ['*'], conversationPrefixes: ['agui-'] },
      { name: 'reader', token: TOKENS.reader, actions: ['status', 'events'] },
      { name: 'elsewhere', token: TOKENS.elsewhere, actions: ['*'], conversationPrefixes: ['other-'] },
    ]),
  });
  await gateway.listen({ port, host: '127.0.0.1' });
});

afterEach(() => nock.cleanAll());

afterAll(async () => {
  await gateway?.close();
  await harness?.close();
  nock.enableNetConnect();
});

/** An AG-UI page's agent on the gateway, recording every event it sees. */
function pageAgent(threadId: string, token = TOKENS.page) {
  const agent = new HttpAgent({ url: agUiUrl, headers: { authorization: `Bearer ${token}` }, threadId });
  const runs: BaseEvent[][] = [];
  const run = async (parameters: Parameters<HttpAgent['runAgent']>[0] = {}) => {
    const events: BaseEvent[] = [];
    runs.push(events);
    await agent.runAgent(
      { tools: [pickColorTool], ...parameters },
      { onEvent: ({ event }) => void events.push(event) },
    );
    return events;
  };
  return { agent, run, runs };
}

const pickColorTool = {
  name: 'pick_color',
  description: 'Asks the user for a color',
  parameters: { type: 'object', properties: { hint: { type: 'string' } } },
};

/** The events' types, without state snapshots (which come whenever what waits changes). */
const kinds = (events: BaseEvent[]) =>
  events.map((event) => event.type as string).filter((type) => type !== 'STATE_SNAPSHOT');
/** Consecutive TEXT_MESSAGE_CONTENT as one, so a sequence does not depend on how text was chunked. */
const squeezed = (types: string[]) =>
  types.filter((type, index) => !(type === 'TEXT_MESSAGE_CONTENT' && types[index - 1] === type));

const pickColor = {
  name: 'pick_color',
  description: 'Asks the user for a color',
  parameters: { type: 'object', properties: { hint: { type: 'string' } } },
};

test('a client tool call waits in the workflow for its sender, takes the result once, and the model reads it', async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_page', name: 'pick_color', arguments: { hint: 'warm' } }] },
    { text: 'You picked red.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'pick a color', { clientTools: [pickColor] });
  const pending = await waitFor(async () => {
    const calls = await harness.agent.pendingClientToolCalls(id);
    return calls.length ? calls : undefined;
  }, 'the client call to wait');
  expect(pending).toEqual([
    expect.objectContaining({
      toolCallId: 'call_page',
      toolName: 'pick_color',
      arguments: '{"hint":"warm"}',
    }),
  ]);
  expect(script.requests[0]!.tools!.map((tool) => tool.function.name)).toContain('pick_color');

  const receipt = await harness.agent.answerClientTool(id, {
    toolCallId: 'call_page',
    text: 'red',
    by: 'page',
  });
  expect(receipt).toEqual({ toolCallId: 'call_page', toolName: 'pick_color' });
  // Delivered again (the same or another result), the call is answered as the first delivery was.
  await expect(
    harness.agent.answerClientTool(id, { toolCallId: 'call_page', text: 'blue', by: 'page' }),
  ).resolves.toEqual(receipt);
  const { finished } = await followToEnd(harness.agent, sent);
  expect(finished.answer).toBe('You picked red.');
  await expect(
    harness.agent.answerClientTool(id, { toolCallId: 'call_page', text: 'blue' }),
  ).resolves.toEqual(receipt);

  const { transcript } = await harness.agent.state(id);
  expect(transcript[0]).not.toHaveProperty('clientTools');
  expect(transcript[2]).toMatchObject({ role: 'toolResult', content: [{ type: 'text', text: 'red' }] });
  expect(script.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'red' });
});

test('an abort ends a client tool call that waits: its result is refused after, and the AG-UI run is cancelled', async () => {
  nockModel([{ toolCalls: [{ id: 'call_wait', name: 'pick_color', arguments: {} }] }], {
    only: (request) => JSON.stringify(request.messages).includes('wait for me'),
  });
  const id = `agui-${randomUUID()}`;
  const messages = [{ id: 'u1', role: 'user', content: 'wait for me' }];
  const asked = await postRunInput(agUiUrl, TOKENS.page, {
    threadId: id,
    runId: 'r1',
    messages,
    tools: [pickColorTool],
  });
  expect(asked.frames.at(-1)!.event.outcome).toEqual({ type: 'success', pendingToolCallIds: ['call_wait'] });
  await harness.agent.abort(id, { reason: 'changed my mind' });
  await waitFor(async () => (await harness.agent.status(id)).lastRun, 'the run to end');
  expect(await harness.agent.pendingClientToolCalls(id)).toEqual([]);
  await expect(harness.agent.answerClientTool(id, { toolCallId: 'call_wait', text: 'late' })).rejects.toThrow(
    UpdateRefusedError,
  );
  const after = await postRunInput(agUiUrl, TOKENS.page, {
    threadId: id,
    runId: 'r2',
    messages,
    tools: [pickColorTool],
  });
  expect(after.frames.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
});

test('a result for a call nobody waits for is refused, and a client tool cannot take a worker tool name', async () => {
  const script = nockModel([{ text: 'done' }]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'hello', {
    clientTools: [{ ...pickColor, name: 'read' }, pickColor],
  });
  const { finished } = await followToEnd(harness.agent, sent);
  expect(finished.answer).toBe('done');
  const offered = script.requests[0]!.tools!.map((tool) => tool.function.name);
  expect(offered.filter((name) => name === 'read')).toHaveLength(1);
  expect(offered).toContain('pick_color');
  const events = await harness.agent.events(id);
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'warning', message: expect.stringContaining('read left out') }),
  );
  await expect(harness.agent.answerClientTool(id, { toolCallId: 'nobody', text: 'x' })).rejects.toThrow(
    UpdateRefusedError,
  );
});

test('an AG-UI page runs a conversation: streamed text, a tool call approved by interrupt, its own tool, each event in order', async () => {
  const id = `agui-${randomUUID()}`;
  const script = nockModel(
    [
      {
        text: 'I will record it first.',
        textChunks: 4,
        chunkDelayMs: 100,
        toolCalls: [{ id: 'call_record', name: 'record', arguments: { value: 'order-17' } }],
      },
      { toolCalls: [{ id: 'call_color', name: 'pick_color', arguments: { hint: 'warm' } }] },
      { text: 'Recorded order-17 and you picked red.', textChunks: 3 },
    ],
    { only: (request) => JSON.stringify(request.messages).includes('record order-17') },
  );
  const page = pageAgent(id);
  page.agent.addMessage({ id: 'u1', role: 'user', content: 'record order-17, then ask me for a color' });

  // First run: the text streams, the tool call is told whole, and the run stops at its approval.
  const first = await page.run();
  expect(squeezed(kinds(first))).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'RUN_FINISHED',
  ]);
  const text = first.filter((event) => event.type === 'TEXT_MESSAGE_CONTENT') as unknown as Array<{
    delta: string;
  }>;
  expect(text.map((event) => event.delta).join('')).toBe('I will record it first.');
  // As the model streamed it: the message is the model call's, not made from its finished reply.
  expect(first.find((event) => event.type === 'TEXT_MESSAGE_START')).not.toMatchObject({
    messageId: expect.stringMatching(/^response-/),
  });
  expect(first.find((event) => event.type === 'TOOL_CALL_ARGS')).toMatchObject({
    delta: '{"value":"order-17"}',
  });
  const finished = first.at(-1) as unknown as {
    outcome: { type: string; interrupts: Array<{ id: string; metadata: { argumentsSha256: string } }> };
  };
  expect(finished.outcome.type).toBe('interrupt');
  const [interrupt] = finished.outcome.interrupts;
  expect(interrupt).toMatchObject({
    id: 'approval:call_record',
    toolCallId: 'call_record',
    reason: 'tool_approval',
  });
  expect(interrupt!.metadata.argumentsSha256).toBe(sha256('{"value":"order-17"}'));
  expect(page.agent.state).toMatchObject({
    pendingApprovals: [{ toolCallId: 'call_record', argumentsSha256: sha256('{"value":"order-17"}') }],
  });
  expect(recorded.has('call_record')).toBe(false);

  // A decision for other arguments is refused, and nothing runs.
  await expect(
    page.run({
      resume: [
        {
          interruptId: interrupt!.id,
          status: 'resolved',
          payload: { decision: 'allow_once', argumentsSha256: sha256('{"value":"order-18"}') },
        },
      ],
    }),
  ).rejects.toThrow(/409|sha|SHA/);
  expect(recorded.has('call_record')).toBe(false);

  // Second run: the decision, bound to the arguments' SHA-256; the tool runs; the page's own tool is called.
  const second = await page.run({
    resume: [
      {
        interruptId: interrupt!.id,
        status: 'resolved',
        payload: { decision: 'allow_once', argumentsSha256: interrupt!.metadata.argumentsSha256 },
      },
    ],
  });
  expect(kinds(second)).toEqual([
    'RUN_STARTED',
    'TOOL_CALL_RESULT',
    'TOOL_CALL_START',
    'TOOL_CALL_ARGS',
    'TOOL_CALL_END',
    'RUN_FINISHED',
  ]);
  expect(recorded.get('call_record')).toBe('order-17');
  expect(second[0]).toMatchObject({ type: 'RUN_STARTED', threadId: id });
  expect(second.find((event) => event.type === 'TOOL_CALL_RESULT')).toMatchObject({
    toolCallId: 'call_record',
    content: 'recorded order-17',
  });
  expect(second.at(-1)).toMatchObject({ outcome: { type: 'success', pendingToolCallIds: ['call_color'] } });
  expect(page.agent.state).toMatchObject({ pendingClientToolCalls: [{ toolCallId: 'call_color' }] });

  // Third run: the page's result; the model reads it and answers, streamed.
  page.agent.addMessage({ id: 't1', role: 'tool', toolCallId: 'call_color', content: 'red' });
  const third = await page.run();
  expect(squeezed(kinds(third))).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'RUN_FINISHED',
  ]);
  expect(third.at(-1)).toMatchObject({ outcome: { type: 'success' } });
  expect(script.requests[2]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'red' });
  expect(page.agent.state).toMatchObject({
    status: 'idle',
    pendingApprovals: [],
    pendingClientToolCalls: [],
  });
  expect(page.agent.messages.at(-1)).toMatchObject({
    role: 'assistant',
    content: 'Recorded order-17 and you picked red.',
  });
  const events = await harness.agent.events(id);
  expect(events.filter((event) => event.type === 'approval_decided')).toEqual([
    expect.objectContaining({ toolCallId: 'call_record', by: 'page-user' }),
  ]);
});

test('a page that drops and reconnects with the last event id gets the rest and nothing twice; the same input again runs nothing', async () => {
  const answer = 'One, two, three, four, five, six.';
  const script = nockModel([{ text: answer, textChunks: 6, chunkDelayMs: 150 }], {
    only: (request) => JSON.stringify(request.messages).includes('count to six'),
  });
  const id = `agui-${randomUUID()}`;
  const input = {
    threadId: id,
    runId: 'r1',
    messages: [{ id: 'u1', role: 'user', content: 'count to six' }],
  };
  const dropped = await postRunInput(agUiUrl, TOKENS.page, input, {
    stopAfter: (frame) => frame.event.type === 'TEXT_MESSAGE_CONTENT',
  });
  const rest = await postRunInput(agUiUrl, TOKENS.page, input, { lastEventId: dropped.frames.at(-1)!.id! });
  expect(rest.status).toBe(200);
  const events = [...dropped.frames, ...rest.frames].map((frame) => frame.event);
  const count = (type: string) => events.filter((event) => event.type === type).length;
  expect(
    events
      .filter((event) => event.type === 'TEXT_MESSAGE_CONTENT')
      .map((event) => event.delta)
      .join(''),
  ).toBe(answer);
  expect([count('TEXT_MESSAGE_START'), count('TEXT_MESSAGE_END'), count('RUN_FINISHED')]).toEqual([1, 1, 1]);
  expect(typesOf(rest.frames).at(-1)).toBe('RUN_FINISHED');

  // The whole input again, without a cursor: the run is told again from its message; nothing runs twice.
  const again = await postRunInput(agUiUrl, TOKENS.page, input);
  expect(typesOf(again.frames).filter((type) => type !== 'STATE_SNAPSHOT')).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'RUN_FINISHED',
  ]);
  expect(script.requests).toHaveLength(1);
  expect((await harness.agent.status(id)).runCount).toBe(1);
});

test('a decision sent twice, even at once, counts once', async () => {
  nockModel(
    [
      { toolCalls: [{ id: 'call_twice', name: 'record', arguments: { value: 'twice' } }] },
      { text: 'Recorded once.' },
    ],
    { only: (request) => JSON.stringify(request.messages).includes('record twice') },
  );
  const id = `agui-${randomUUID()}`;
  const messages = [{ id: 'u1', role: 'user', content: 'record twice' }];
  const asked = await postRunInput(agUiUrl, TOKENS.page, { threadId: id, runId: 'r1', messages });
  const { interrupts } = asked.frames.at(-1)!.event.outcome as {
    interrupts: Array<{ id: string; metadata: { argumentsSha256: string } }>;
  };
  const resume = [
    {
      interruptId: interrupts[0]!.id,
      status: 'resolved',
      payload: { decision: 'allow_once', argumentsSha256: interrupts[0]!.metadata.argumentsSha256 },
    },
  ];
  const answered = await Promise.all(
    [1, 2].map(() => postRunInput(agUiUrl, TOKENS.page, { threadId: id, runId: 'r2', messages, resume })),
  );
  expect(answered.map((reply) => reply.status)).toEqual([200, 200]);
  const late = await postRunInput(agUiUrl, TOKENS.page, { threadId: id, runId: 'r3', messages, resume });
  expect(late.status).toBe(200);
  await waitFor(async () => (await harness.agent.status(id)).lastRun, 'the run to finish');
  const events = await harness.agent.events(id);
  expect(events.filter((event) => event.type === 'approval_decided')).toHaveLength(1);
  expect(events.filter((event) => event.type === 'tool_execution_start')).toHaveLength(1);
  expect(recorded.get('call_twice')).toBe('twice');
});

test('an AG-UI caller reaches only what its token allows, and a malformed input is refused', async () => {
  nockModel([{ text: 'Hello.' }], {
    only: (request) => JSON.stringify(request.messages).includes('scoped hello'),
  });
  const id = `agui-${randomUUID()}`;
  const messages = [{ id: 'u1', role: 'user', content: 'scoped hello' }];
  // A token for other conversations may neither start nor read this one.
  const elsewhere = await postRunInput(agUiUrl, TOKENS.elsewhere, { threadId: id, runId: 'r0', messages });
  expect(elsewhere.status).toBe(403);
  const started = await postRunInput(agUiUrl, TOKENS.page, { threadId: id, runId: 'r1', messages });
  expect(typesOf(started.frames).at(-1)).toBe('RUN_FINISHED');
  expect(
    (await postRunInput(agUiUrl, TOKENS.elsewhere, { threadId: id, runId: 'r2', messages })).status,
  ).toBe(403);
  // A token that may only read follows the conversation (a message taken already is no new one), but
  // sends nothing and decides nothing.
  const reader = await postRunInput(agUiUrl, TOKENS.reader, { threadId: id, runId: 'r3', messages });
  expect(typesOf(reader.frames).filter((type) => type !== 'STATE_SNAPSHOT')).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'TEXT_MESSAGE_END',
    'RUN_FINISHED',
  ]);
  const more = [
    ...messages,
    { id: 'a1', role: 'assistant', content: 'Hello.' },
    { id: 'u2', role: 'user', content: 'again' },
  ];
  expect(
    (await postRunInput(agUiUrl, TOKENS.reader, { threadId: id, runId: 'r4', messages: more })).status,
  ).toBe(403);
  const resume = [
    {
      interruptId: 'approval:x',
      status: 'resolved',
      payload: { decision: 'allow_once', argumentsSha256: '0'.repeat(64) },
    },
  ];
  expect(
    (await postRunInput(agUiUrl, TOKENS.reader, { threadId: id, runId: 'r5', messages, resume })).status,
  ).toBe(403);
  expect((await postRunInput(agUiUrl, 'not-a-token', { threadId: id, runId: 'r6', messages })).status).toBe(
    401,
  );
  expect((await harness.agent.status(id)).runCount).toBe(1);

  expect((await postRunInput(agUiUrl, TOKENS.page, { runId: 'r7', messages })).status).toBe(400);
  const badCursor = await postRunInput(
    agUiUrl,
    TOKENS.page,
    { threadId: id, runId: 'r8', messages },
    { lastEventId: 'x<script>' },
  );
  expect(badCursor.status).toBe(400);
});
