import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import nock from 'nock';
import sharp from 'sharp';
import { createToolResultFinisher } from '../../src/tools/finish-tool-result';
import type { ToolHooks } from '../../src/tools/tool-hooks';
import { rapSubscriptionsQuery, stateQuery } from '../../src/shared/conversation-api';
import { defaultPayloadConverter } from '@temporalio/common';
import { buildTimeline } from '../../src/history/build-timeline';
import type { ToolCallItem } from '../../src/history/timeline';
import { readConversationHistory } from '../../src/cli/read-conversation-history';
import { RapToolSource } from '../../src/rap/rap-tool-source';
import { type RapCallbackServer, startRapCallbackServer } from '../../src/rap/callback-server';
import type { RapSettings } from '../../src/rap/rap-settings';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { agentDataConverter } from '../../src/worker/data-converter';
import { freePort } from '../../src/platform/free-port';
import { type RapInvocation, postCallback, startRapToolServer } from '../support/rap-tool-server';
import type { ChatRequest } from '../support/scripted-model';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

/** Long enough for a loaded machine to answer in time, short enough to wait for a tool that never does. */
const RAP_TIMEOUT_MS = 12_000;
const failedOnce = new Set<string>();

let tools: Awaited<ReturnType<typeof startRapToolServer>>;
let other: Awaited<ReturnType<typeof startRapToolServer>>;
let invalid: Awaited<ReturnType<typeof startRapToolServer>>;
let settings: RapSettings;
let harness: TestHarness;
let callbacks: RapCallbackServer;
let connection: Connection;

/** What the worker's persist hook saw: every result, however it arrived, passes it. */
const persisted: Array<{ toolName: string; toolCallId: string }> = [];
const redactTokens: ToolHooks = {
  toolResultPersist({ toolName, toolCallId, result }) {
    persisted.push({ toolName, toolCallId });
    return {
      ...result,
      content: result.content.map((block) =>
        block.type === 'text' ? { ...block, text: block.text.replace(/TOKEN-\d+/g, '[redacted]') } : block,
      ),
    };
  },
};

async function startWorker(taskQueue?: string): Promise<void> {
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    registry: new ToolRegistry(builtinTools(), [new RapToolSource(settings)]),
    rapToolsets: settings.toolsets,
    hooks: [redactTokens],
    ...(taskQueue ? { taskQueue } : {}),
  });
  callbacks = await startRapCallbackServer({
    client: new Client({ connection, namespace: 'default', dataConverter: agentDataConverter() }),
    secret: settings.secret,
    host: settings.host,
    port: settings.port,
    finisher: createToolResultFinisher([redactTokens]),
  });
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  tools = await startRapToolServer({
    name: 'builds',
    tools: [
      { name: 'lookup', annotations: { readOnly: true } },
      { name: 'flaky' },
      { name: 'refuses' },
      { name: 'silent' },
      { name: 'watch_builds' },
      { name: 'clash' },
      {
        name: 'screenshot',
        inputSchema: {
          type: 'object',
          properties: { page: { type: 'integer', minimum: 1 } },
          required: ['page'],
        },
      },
    ],
    ack: (invocation, attempt) => {
      if (invocation.operation === 'refuses') return 400;
      if (invocation.operation === 'flaky' && attempt === 1) {
        failedOnce.add(invocation.id);
        return 500;
      }
      return 200;
    },
  });
  other = await startRapToolServer({ name: 'other', tools: [{ name: 'clash' }, { name: 'other_tool' }] });
  invalid = await startRapToolServer({
    name: 'invalid',
    tools: [],
    toolsetOverride: {
      name: 'invalid',
      endpoint: 'not a url',
      tools: [{ name: 'bad_tool', description: 'x', inputSchema: {} }],
    },
  });
  settings = {
    toolsets: [tools.url, other.url, invalid.url],
    host: '127.0.0.1',
    port: await freePort(),
    secret: randomBytes(32),
    timeoutMs: RAP_TIMEOUT_MS,
  };
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  await startWorker();
});
afterAll(async () => {
  await callbacks?.close();
  await harness?.close();
  await connection?.close();
  await Promise.all([tools?.close(), other?.close(), invalid?.close()]);
  nock.cleanAll();
  nock.enableNetConnect();
});
afterEach(() => nock.cleanAll());

const toolResults = (request: ChatRequest) =>
  new Map(request.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]));
const invocationOf = (id: string) =>
  waitFor(
    async () => tools.invocations.find((invocation) => invocation.id === id),
    `the invocation of ${id}`,
  );

test('a RAP tool acks, answers later by callback, and the answer is taken once; forged callbacks change nothing', async () => {
  let offered: string[] = [];
  let answered: ChatRequest | undefined;
  nockModel([
    (request) => {
      offered = (request.tools ?? []).map((tool) => tool.function.name);
      return { toolCalls: [{ id: 'call_lookup', name: 'lookup', arguments: { build: 7 } }] };
    },
    (request) => {
      answered = request;
      return { text: 'Build 7 is green.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'How is build 7?', { sender: 'ana' });
  const invocation: RapInvocation = await invocationOf('call_lookup');
  expect(invocation).toMatchObject({
    operation: 'lookup',
    arguments: { build: 7 },
    group_id: id,
    user_id: 'ana',
    call_id: null,
  });
  expect(invocation.thread_ancestors).toBeUndefined();
  // Validation: the invalid toolset exposes nothing, the clashing name neither toolset's tool.
  expect(offered).toEqual(expect.arrayContaining(['lookup', 'other_tool', 'cancel_subscription']));
  expect(offered).not.toContain('clash');
  expect(offered).not.toContain('bad_tool');

  const url = new URL(invocation.callback_url);
  const forged = `${url.origin}${url.pathname.slice(0, -4)}AAAA`;
  const result = {
    type: 'tool_result',
    group_id: id,
    id: 'call_lookup',
    text: 'green',
    display_as: [{ type: 'text', content: 'ok' }],
  };
  expect(await postCallback(forged, result)).toBe(403);
  expect(await postCallback(invocation.callback_url, { ...result, group_id: 'conv-someone-else' })).toBe(403);
  expect(await postCallback(invocation.callback_url, { ...result, id: 'call_other' })).toBe(403);
  expect(await postCallback(invocation.callback_url, { type: 'tool_result', group_id: id })).toBe(400);

  expect(await postCallback(invocation.callback_url, result)).toBe(200);
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ answer: 'Build 7 is green.' });
  expect(toolResults(answered!).get('call_lookup')).toBe('green');
  // A duplicate, or a replay after completion, changes nothing.
  expect(await postCallback(invocation.callback_url, { ...result, text: 'red' })).toBe(409);
  const state = await handle.query(stateQuery);
  const stored = state.transcript.find((message) => message.role === 'toolResult');
  expect(stored).toMatchObject({
    content: [{ type: 'text', text: 'green' }],
    details: { rap: { displayAs: [{ type: 'text', content: 'ok' }] } },
  });
  expect(state.runCount).toBe(1);
  const warnings = (await eventsOf(handle)).flatMap((event) =>
    event.type === 'warning' ? [event.message] : [],
  );
  expect(warnings.join('\n')).toMatch(/RAP toolset at .* offers no tools: invalid toolset/);
  expect(warnings.join('\n')).toMatch(/RAP tool clash is defined by builds and other, so by neither/);
});

test('after an abort, history shows what the model read of a callback tool call, and its late answer apart', async () => {
  nockModel([{ toolCalls: [{ id: 'call_abandoned', name: 'silent', arguments: {} }] }]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Start the silent job', { options: { approval: { mode: 'auto' } } });
  const invocation = await invocationOf('call_abandoned');
  await harness.agent.abort(id, { reason: 'changed my mind', by: 'ana' });
  await waitForEvent(handle, 'run_finished');
  const late = {
    type: 'tool_result',
    group_id: id,
    id: 'call_abandoned',
    text: 'the job finished after all',
  };
  expect(await postCallback(invocation.callback_url, late)).toBe(200);

  const call = await waitFor(async () => {
    const timeline = buildTimeline(
      id,
      await readConversationHistory(harness.client, id),
      defaultPayloadConverter,
    );
    const item = timeline.items.find(
      (entry): entry is ToolCallItem => entry.kind === 'tool_call' && entry.toolCallId === 'call_abandoned',
    );
    return item?.lateResult !== undefined ? item : undefined;
  }, 'the late answer in history');
  expect(call).toMatchObject({
    aborted: true,
    isError: true,
    result: 'interrupted before the tool answered; its later answer was not given to the model',
    lateResult: 'the job finished after all',
  });
  // The transcript agrees: the model read an interrupted call, not the late answer.
  const stored = (await handle.query(stateQuery)).transcript.find(
    (message) => message.role === 'toolResult' && message.toolCallId === 'call_abandoned',
  );
  expect(stored).toMatchObject({ aborted: true, isError: true });
  expect(JSON.stringify(stored)).not.toContain('finished after all');
});

test('a result that arrives by callback passes the same finishing steps as any other: the persist hook redacts it', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_secret_lookup', name: 'lookup', arguments: { build: 8 } }] },
    { text: 'Looked it up.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'What is the deploy token?');
  const invocation = await invocationOf('call_secret_lookup');
  expect(
    await postCallback(invocation.callback_url, {
      type: 'tool_result',
      group_id: id,
      id: 'call_secret_lookup',
      text: 'the token is TOKEN-8812\u0007',
    }),
  ).toBe(200);
  await waitForEvent(handle, 'run_finished');
  const stored = (await handle.query(stateQuery)).transcript.find(
    (message) => message.role === 'toolResult' && message.toolCallId === 'call_secret_lookup',
  );
  // Redacted by the hook, and the control character removed, as for a result an activity returns.
  expect(stored).toMatchObject({ content: [{ type: 'text', text: 'the token is [redacted]' }] });
  expect(persisted).toContainEqual({ toolName: 'lookup', toolCallId: 'call_secret_lookup' });
});

test('5xx is retried with backoff until accepted; 4xx is an error result at once; a tool that never answers times out', async () => {
  let answered: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [
        { id: 'call_flaky', name: 'flaky', arguments: {} },
        { id: 'call_refuses', name: 'refuses', arguments: {} },
        { id: 'call_silent', name: 'silent', arguments: {} },
      ],
    },
    (request) => {
      answered = request;
      return { text: 'Done.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Try them all', { options: { approval: { mode: 'auto' } } });
  const flaky = await waitFor(
    async () =>
      tools.invocations.filter(
        (invocation) => invocation.id === 'call_flaky' && invocation.group_id === id,
      )[1],
    'the second try of flaky',
  );
  expect(failedOnce.has('call_flaky')).toBe(true);
  expect(
    await postCallback(flaky.callback_url, {
      type: 'tool_result',
      group_id: id,
      id: 'call_flaky',
      text: 'worked',
    }),
  ).toBe(200);

  await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
  const results = toolResults(answered!);
  expect(results.get('call_flaky')).toBe('worked');
  expect(results.get('call_refuses')).toMatch(/did not accept the call: it answered 400/);
  expect(
    tools.invocations.filter((invocation) => invocation.id === 'call_refuses' && invocation.group_id === id),
  ).toHaveLength(1);
  expect(results.get('call_silent')).toMatch(/timed out|timeout/i);
});

test('arguments that break the inputSchema are refused before dispatch; an image result (mediaType) is brought within the limits', async () => {
  // Made before the call starts, so only the callback's own work counts against the call's timeout.
  const width = 2_600;
  const height = 1_300;
  const pixels = Buffer.alloc(width * height * 3);
  for (let index = 0; index < pixels.length; index++) pixels[index] = (index * 7919) % 251;
  const png = await sharp(pixels, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
  let answered: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [
        { id: 'call_shot', name: 'screenshot', arguments: { page: 2 } },
        { id: 'call_bad_shot', name: 'screenshot', arguments: { page: 0 } },
      ],
    },
    (request) => {
      answered = request;
      return { text: 'A large picture.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Show page 2', { options: { approval: { mode: 'auto' } } });
  const invocation = await invocationOf('call_shot');
  expect(invocation.arguments).toEqual({ page: 2 });

  expect(
    await postCallback(invocation.callback_url, {
      type: 'tool_result',
      group_id: id,
      id: 'call_shot',
      content: [
        { type: 'text', text: 'page 2:' },
        { type: 'image', data: png.toString('base64'), mediaType: 'image/png' },
      ],
    }),
  ).toBe(200);
  await waitForEvent(handle, 'run_finished');

  expect(tools.invocations.some((call) => call.id === 'call_bad_shot')).toBe(false);
  expect(toolResults(answered!).get('call_bad_shot')).toMatch(/invalid arguments/);
  const stored = (await handle.query(stateQuery)).transcript.find(
    (message) => message.role === 'toolResult' && message.toolCallId === 'call_shot',
  );
  const image = stored?.role === 'toolResult' ? stored.content[1] : undefined;
  expect(image).toMatchObject({ type: 'image', mimeType: expect.stringMatching(/^image\//) });
  const metadata = await sharp(Buffer.from(image?.type === 'image' ? image.data : '', 'base64')).metadata();
  expect(metadata.width).toBeLessThanOrEqual(2_000);
});

test('a call pending while its worker restarts is completed by the callback to the new one', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_restart', name: 'lookup', arguments: {} }] },
    (request) => ({ text: `after restart: ${toolResults(request).get('call_restart')}` }),
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Look it up');
  const invocation = await invocationOf('call_restart');
  const taskQueue = harness.taskQueue;
  await callbacks.close();
  await harness.close();
  await startWorker(taskQueue);

  expect(
    await postCallback(invocation.callback_url, {
      type: 'tool_result',
      group_id: id,
      id: 'call_restart',
      text: 'found it',
    }),
  ).toBe(200);
  const handle = harness.client.workflow.getHandle(id);
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ answer: 'after restart: found it' });
});

test('subscription events wake an idle conversation until the subscription ends; close_thread is sent when it ends', async () => {
  let eventSeen: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ id: 'call_watch', name: 'watch_builds', arguments: { repo: 'acme/api' } }] },
    { text: 'Watching.' },
    (request) => {
      eventSeen = request;
      return { text: 'Build 8 failed.' };
    },
    { text: 'No more builds.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Watch the builds', { options: { approval: { mode: 'auto' } } });
  const invocation = await invocationOf('call_watch');
  expect(
    await postCallback(invocation.callback_url, {
      type: 'tool_result',
      group_id: id,
      id: 'call_watch',
      text: 'Subscribed. Subscription ID: sub_1',
      subscription: true,
    }),
  ).toBe(200);
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  expect(await handle.query(rapSubscriptionsQuery)).toEqual(['call_watch']);

  const event = {
    type: 'subscription_event',
    group_id: id,
    tool_call_id: 'call_watch',
    text: '{"build":8,"status":"failed"}',
  };
  expect(await postCallback(invocation.callback_url, event)).toBe(200);
  expect(await waitForEvent(handle, 'run_finished', (finished) => finished.run === 2)).toMatchObject({
    answer: 'Build 8 failed.',
  });
  expect(eventSeen!.messages.at(-1)).toMatchObject({
    role: 'tool',
    content: '{"build":8,"status":"failed"}',
  });

  expect(await postCallback(invocation.callback_url, { ...event, text: 'last', final: true })).toBe(200);
  await waitForEvent(handle, 'run_finished', (finished) => finished.run === 3);
  expect(await postCallback(invocation.callback_url, { ...event, text: 'too late' })).toBe(410);
  expect((await handle.query(stateQuery)).runCount).toBe(3);

  await harness.agent.end(id);
  await handle.result();
  await waitFor(
    async () => (tools.closedThreads.includes(id) && other.closedThreads.includes(id)) || undefined,
    'close_thread',
  );
});
