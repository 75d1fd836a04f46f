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
import { type StreamResponse, TaskState } from '@a2a-js/sdk';
import {
  a2aClientFor,
  a2aRequest,
  chunksOf,
  collect,
  cursorOf,
  stateOf,
  textChunksOf,
  textOf,
  textPart,
} from '../support/a2a-js-client';
import { type AgUiFrame, postRunInput, typesOf } from '../support/ag-ui-stream';
import { type CliProcess, assertCliBuilt, startCli } from '../support/cli-process';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess, toolAttempts } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

/**
 * AG-UI and A2A across crashes: the worker SIGKILLed while a page's run streams, and the gateway
 * SIGKILLed while a page, or an A2A client, streams. The page reconnects (to another gateway
 * process) with the last event id and gets the rest, nothing twice; a decision sent again is applied
 * once. The A2A client resubscribes to the task with its last cursor, and gets the rest the same way.
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

/** A gateway process (`durable-agent gateway`) on a free port, for the tokens of `tokensFile`; its origin. */
async function startGateway(taskQueue: string, tokensFile: string, env: NodeJS.ProcessEnv = {}) {
  const gateway = startCli(['gateway'], {
    ...process.env,
    ...env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: taskQueue,
    DURABLE_AGENT_GATEWAY_TOKENS: tokensFile,
    DURABLE_AGENT_GATEWAY_PORT: '0',
  });
  gateways.push(gateway);
  const [, origin] = await gateway.stderrMatching(/gateway listening on (http:\/\/\S+)/);
  return { gateway, origin: origin! };
}

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
  const startAgUiGateway = async () => {
    const { gateway, origin } = await startGateway(taskQueue, tokens);
    return { gateway, url: `${origin}/v1/ag-ui` };
  };
  const id = `agui-${randomUUID()}`;
  const messages = [{ id: 'u1', role: 'user', content: 'write the note' }];

  // The page streams from the first gateway, which is killed after the first piece of text.
  const first = await startAgUiGateway();
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
  const second = await startAgUiGateway();
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
  const third = await startAgUiGateway();
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

test('the gateway SIGKILLed while an A2A client streams a task: resubscribed to another with its last cursor, it sees every later update once, to completed', async () => {
  assertCliBuilt();
  const spoken = 'Let me count to three first, and then I will tell you what I found.';
  const answer = 'Counted to three, and done.';
  model = await startScriptedModelServer([
    {
      text: spoken,
      textChunks: 10,
      chunkDelayMs: 200,
      toolCalls: [{ id: 'call_a2a_count', name: 'slow_count', arguments: { n: 3 } }],
    },
    { text: answer, textChunks: 3 },
  ]);
  const markers = await mkdtemp(path.join(directory, 'a2a-'));
  const taskQueue = `a2a-gateway-crash-${randomUUID()}`;
  workers.push(
    await spawnWorkerProcess({
      TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseUrl,
      WORKSPACE: markers,
      MARKER_DIR: markers,
    }),
  );
  const tokens = path.join(markers, 'tokens.json');
  await writeFile(tokens, JSON.stringify({ tokens: [{ name: 'peer', token: TOKEN, actions: ['*'] }] }));
  // The count holds until the client has resubscribed: the rest of the task happens while it listens.
  await writeFile(path.join(markers, 'hold'), '');

  // The client streams from the first gateway, which is killed after the second piece of text.
  const first = await startGateway(taskQueue, tokens);
  const before: StreamResponse[] = [];
  await expect(
    (async () => {
      const client = await a2aClientFor(first.origin, TOKEN);
      for await (const event of client.sendMessageStream(a2aRequest([textPart('count, then tell me')]))) {
        before.push(event);
        if (chunksOf(before).length === 2) first.gateway.kill('SIGKILL');
      }
    })(),
  ).rejects.toThrow();
  expect(chunksOf(before)).toHaveLength(2);
  const task = (before[0]!.payload as { value: { id: string; contextId: string } }).value;
  const cursor = cursorOf(before.at(-1)!)!;

  // The second gateway serves its metrics too.
  const metricsPort = await freePort();
  const second = await startGateway(taskQueue, tokens, { DURABLE_AGENT_METRICS_PORT: String(metricsPort) });
  const client = await a2aClientFor(second.origin, TOKEN);
  const resubscribed = client.resubscribeTask(
    { tenant: '', id: task.id },
    { serviceParameters: { 'Last-Event-ID': cursor } },
  );
  const snapshot = await resubscribed.next();
  await rm(path.join(markers, 'hold'));
  const after = [snapshot.value as StreamResponse, ...(await collect(resubscribed))];
  expect(after[0]!.payload?.$case).toBe('task');
  expect(stateOf(after.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED);
  const updates = [...before, ...after.slice(1)];
  // Nothing twice: no two updates of the same kind at the same cursor.
  const keys = updates.map((event) => {
    const artifact =
      event.payload?.$case === 'artifactUpdate' ? event.payload.value.artifact?.artifactId : '';
    return `${event.payload?.$case} ${artifact} ${cursorOf(event)}`;
  });
  expect(new Set(keys).size).toBe(updates.length);
  const states = updates.map(stateOf).filter((state) => state !== undefined);
  expect(states.filter((state, index) => state !== states[index - 1])).toEqual([
    TaskState.TASK_STATE_SUBMITTED,
    TaskState.TASK_STATE_WORKING,
    TaskState.TASK_STATE_COMPLETED,
  ]);
  // The tool's call and result, and the answer, once each, though they came while no gateway ran.
  const dataKinds = updates.flatMap((event) =>
    event.payload?.$case === 'statusUpdate'
      ? (event.payload.value.status?.message?.parts ?? []).flatMap((part) =>
          part.content?.$case === 'data' ? [(part.content.value as { kind: string }).kind] : [],
        )
      : [],
  );
  expect(dataKinds).toEqual(['tool_call', 'tool_result']);
  const answers = updates.flatMap((event) =>
    event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId === 'answer'
      ? [textOf(event.payload.value.artifact.parts)]
      : [],
  );
  expect(answers).toEqual([answer]);
  // Each model call's text at its offsets, no chunk twice (text made while no gateway listened, or
  // before a gateway learned where the worker streams it, may be skipped: the next offset shows it).
  const chunks = textChunksOf(updates);
  const firstCall = chunks[0]!.artifactId;
  for (const call of new Set(chunks.map((chunk) => chunk.artifactId))) {
    const whole = call === firstCall ? spoken : answer;
    let end = 0;
    for (const { text, offset } of chunks.filter((chunk) => chunk.artifactId === call)) {
      expect(offset).toBeGreaterThanOrEqual(end);
      expect(whole.slice(offset, offset + text.length)).toBe(text);
      end = offset + text.length;
    }
  }
  expect(await toolAttempts(markers)).toHaveLength(1);
  expect(model.script.requests).toHaveLength(2);

  // What the second gateway served, on its Prometheus endpoint: one subscription, and no stream open now.
  const series = (text: string, name: string, labels: string) =>
    new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1];
  const scraped = await waitFor(async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return series(text, 'durable_agent_a2a_requests_total', 'method="SubscribeToTask",outcome="ok"') === '1'
      ? text
      : undefined;
  }, 'the gateway to count the subscription');
  expect(scraped).toMatch(/^durable_agent_a2a_streams 0$/m);
}, 120_000);
