import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { createGateway } from '../../src/http/gateway-app';
import { freePort } from '../../src/platform/free-port';
import { type AgUiFrame, postRunInput, typesOf } from '../support/ag-ui-stream';
import { type CliProcess, assertCliBuilt, startCli } from '../support/cli-process';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess, toolAttempts } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

/**
 * AG-UI across crashes: the worker SIGKILLed while a page's run streams, and the gateway SIGKILLed
 * while a page streams. The page reconnects (to another gateway process) with the last event id
 * and gets the rest, nothing twice; a decision sent again is applied once.
 */
const TOKEN = `tok-page-${randomUUID()}`;
let connection: Connection;
let directory: string;
let model: ScriptedModelServer | undefined;
const workers: ChildProcess[] = [];
const gateways: CliProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ag-ui-crash-'));
});

afterEach(async () => {
  for (const worker of workers.splice(0)) await killWorkerProcess(worker);
  for (const gateway of gateways.splice(0)) {
    gateway.kill('SIGKILL');
    await gateway.done;
  }
  await model?.close();
  model = undefined;
});

afterAll(async () => {
  await connection.close();
  await rm(directory, { recursive: true, force: true });
});

const contentOf = (frames: AgUiFrame[]) =>
  frames
    .filter((frame) => frame.event.type === 'TEXT_MESSAGE_CONTENT')
    .map((frame) => frame.event.delta)
    .join('');
const countOf = (frames: AgUiFrame[], type: string) =>
  frames.filter((frame) => frame.event.type === type).length;

test('a worker SIGKILLed while a page’s run streams: the next worker carries on, and the page sees each event once', async () => {
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_count', name: 'slow_count', arguments: { n: 3 } }] },
    { text: 'Counted to three, and done.', textChunks: 3 },
  ]);
  const markers = await mkdtemp(path.join(directory, 'worker-'));
  await writeFile(path.join(markers, 'hold'), '');
  const env = {
    TASK_QUEUE: `ag-ui-crash-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: markers,
    MARKER_DIR: markers,
  };
  workers.push(await spawnWorkerProcess(env));
  const agent = new AgentClient(new Client({ connection }), env.TASK_QUEUE);
  const port = await freePort();
  const gateway = createGateway({
    agent,
    eventPollMs: 50,
    tokens: new GatewayTokens([{ name: 'page', token: TOKEN, actions: ['*'] }]),
  });
  await gateway.listen({ port, host: '127.0.0.1' });
  try {
    const id = `agui-${randomUUID()}`;
    const streaming = postRunInput(`http://127.0.0.1:${port}/v1/ag-ui`, TOKEN, {
      threadId: id,
      runId: 'r1',
      messages: [{ id: 'u1', role: 'user', content: 'count to three' }],
    });
    // The count has begun on the first worker (and holds): kill it there, start another.
    await waitFor(
      async () => ((await toolAttempts(markers)).length === 1 ? true : undefined),
      'the count to start',
    );
    await killWorkerProcess(workers.shift()!);
    workers.push(await spawnWorkerProcess(env));
    await rm(path.join(markers, 'hold'));

    const { frames } = await streaming;
    const kinds = typesOf(frames).filter((type) => type !== 'STATE_SNAPSHOT');
    expect(
      kinds.filter((type, index) => !(type === 'TEXT_MESSAGE_CONTENT' && kinds[index - 1] === type)),
    ).toEqual([
      'RUN_STARTED',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(frames.find((frame) => frame.event.type === 'TOOL_CALL_RESULT')!.event.content).toBe(
      'counted to 3',
    );
    expect(contentOf(frames)).toBe('Counted to three, and done.');
    // The count ran on both workers (it is idempotent, so the second ran it again); the model twice.
    expect((await toolAttempts(markers)).map((line) => line.split(' ')[1])).toEqual([
      'call_count',
      'call_count',
    ]);
    expect(model.script.requests).toHaveLength(2);
  } finally {
    await gateway.close();
  }
}, 120_000);

test('the gateway SIGKILLed while a page streams: reconnecting to another gets the rest, nothing twice; a decision sent again counts once', async () => {
  assertCliBuilt();
  const answer = 'I will write the note now, one careful word at a time.';
  model = await startScriptedModelServer([
    {
      text: answer,
      textChunks: 10,
      chunkDelayMs: 200,
      toolCalls: [{ id: 'call_note', name: 'write', arguments: { path: 'note.txt', content: 'once' } }],
    },
    { text: 'Written.' },
  ]);
  const markers = await mkdtemp(path.join(directory, 'gateway-'));
  const taskQueue = `ag-ui-gateway-crash-${randomUUID()}`;
  workers.push(
    await spawnWorkerProcess({
      TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseUrl,
      WORKSPACE: markers,
      MARKER_DIR: markers,
    }),
  );
  const tokens = path.join(markers, 'tokens.json');
  await writeFile(tokens, JSON.stringify({ tokens: [{ name: 'page', token: TOKEN, actions: ['*'] }] }));
  const startGateway = async () => {
    const gateway = startCli(['gateway'], {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
      AGENT_TASK_QUEUE: taskQueue,
      DURABLE_AGENT_GATEWAY_TOKENS: tokens,
      DURABLE_AGENT_GATEWAY_PORT: '0',
    });
    gateways.push(gateway);
    const [, url] = await gateway.stderrMatching(/gateway listening on (http:\/\/\S+)/);
    return { gateway, url: `${url!}/v1/ag-ui` };
  };
  const id = `agui-${randomUUID()}`;
  const messages = [{ id: 'u1', role: 'user', content: 'write the note' }];

  // The page streams from the first gateway, which is killed after the first piece of text.
  const first = await startGateway();
  const cut = await postRunInput(
    first.url,
    TOKEN,
    { threadId: id, runId: 'r1', messages },
    {
      onFrame: (frame) => {
        if (frame.event.type === 'TEXT_MESSAGE_CONTENT') first.gateway.kill('SIGKILL');
      },
    },
  );
  expect(cut.broken).toBe(true);
  const second = await startGateway();
  const rest = await postRunInput(
    second.url,
    TOKEN,
    { threadId: id, runId: 'r1', messages },
    {
      lastEventId: cut.frames.at(-1)!.id!,
    },
  );
  const run = [...cut.frames, ...rest.frames];
  expect(contentOf(run)).toBe(answer);
  expect([
    countOf(run, 'TEXT_MESSAGE_START'),
    countOf(run, 'TOOL_CALL_START'),
    countOf(run, 'RUN_FINISHED'),
  ]).toEqual([1, 1, 1]);
  const { interrupts } = rest.frames.at(-1)!.event.outcome as {
    interrupts: Array<{ id: string; metadata: { argumentsSha256: string } }>;
  };

  // The decision (the page's conversation now ends with the model's reply); the gateway is killed as it
  // streams what follows; the page sends it again elsewhere.
  const replied = [...messages, { id: 'a1', role: 'assistant', content: answer }];
  const resume = [
    {
      interruptId: interrupts[0]!.id,
      status: 'resolved',
      payload: { decision: 'allow_once', argumentsSha256: interrupts[0]!.metadata.argumentsSha256 },
    },
  ];
  const decided = await postRunInput(
    second.url,
    TOKEN,
    { threadId: id, runId: 'r2', messages: replied, resume },
    {
      onFrame: (frame) => {
        if (frame.event.type === 'RUN_STARTED') second.gateway.kill('SIGKILL');
      },
    },
  );
  expect(decided.broken).toBe(true);
  const third = await startGateway();
  const after = await postRunInput(
    third.url,
    TOKEN,
    { threadId: id, runId: 'r2', messages: replied, resume },
    {
      lastEventId: decided.frames.at(-1)!.id!,
    },
  );
  expect(typesOf(after.frames).at(-1)).toBe('RUN_FINISHED');
  expect(after.frames.at(-1)!.event.outcome).toEqual({ type: 'success' });
  const ended = [...decided.frames, ...after.frames];
  expect([countOf(ended, 'TOOL_CALL_RESULT'), countOf(ended, 'RUN_FINISHED')]).toEqual([1, 1]);
  expect(contentOf(ended)).toBe('Written.');

  const agent = new AgentClient(new Client({ connection }), taskQueue);
  const events = await agent.events(id);
  expect(events.filter((event) => event.type === 'approval_decided')).toHaveLength(1);
  expect(events.filter((event) => event.type === 'tool_execution_start')).toHaveLength(1);
  expect(await readFile(path.join(markers, 'note.txt'), 'utf8')).toBe('once');
  expect(model.script.requests).toHaveLength(2);
}, 120_000);
