import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Part, StreamResponse } from '@a2a-js/sdk';
import {
  type Client as A2AClient,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { AgentClient } from '../src/client/agent-client';
import { GatewayTokens } from '../src/gateway/gateway-tokens';
import { createGateway } from '../src/http/gateway-app';
import { freePort } from '../src/platform/free-port';
import { cli, startPacedModel, stderrLine } from './first-text';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { scratchDir } from './support/scratch';
import { type Summary, summarize, table } from './support/stats';
import { REPO_ROOT } from './support/worker-process';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cli.js');
const TOKEN = `bench-${randomUUID()}`;

/** When one request's run was first seen to start, and its first text arrived, at this process. */
interface Arrival {
  sentAt: number;
  runStartedAt: number;
  firstTextAt: number;
}

/** Request to the run's start seen at the client; the model's first token to the first text there. */
interface Rows {
  runStarted: Summary;
  firstText: Summary;
}

export interface ProtocolFirstTextResult {
  mcp: Rows;
  a2a: Rows;
  agUi: Rows;
  sse: Rows;
  table: string;
}

/** `start_task` over Streamable HTTP, waiting for the answer: its first progress notification, and the first that carries text. */
async function mcpOnce(client: McpClient): Promise<Arrival> {
  let runStartedAt: number | undefined;
  let firstTextAt: number | undefined;
  const sentAt = preciseNow();
  await client.callTool(
    { name: 'start_task', arguments: { task: 'Say something long', wait_seconds: 60 } },
    CallToolResultSchema,
    {
      timeout: 120_000,
      onprogress: ({ message }) => {
        runStartedAt ??= preciseNow();
        if (firstTextAt === undefined && message?.startsWith('writing:')) firstTextAt = preciseNow();
      },
    },
  );
  if (runStartedAt === undefined || firstTextAt === undefined) throw new Error('no progress with text came');
  return { sentAt, runStartedAt, firstTextAt };
}

const HEADERS = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/** Reads a server-sent event stream until `textMark` is in it: when `startMark`, then it, arrived. */
async function streamArrivals(
  stream: Response,
  sentAt: number,
  startMark: string,
  textMark: string,
): Promise<Arrival> {
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  let runStartedAt: number | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any text: ${seen.slice(-300)}`);
      seen += decoder.decode(value, { stream: true });
      if (runStartedAt === undefined && seen.includes(startMark)) runStartedAt = preciseNow();
      if (seen.includes(textMark)) return { sentAt, runStartedAt: runStartedAt!, firstTextAt: preciseNow() };
    }
  } finally {
    await reader.cancel();
  }
}

/** `POST /v1/conversations`, then its event stream: the `run_started` event, and the first `model_text`. */
async function sseOnce(base: string): Promise<Arrival> {
  const sentAt = preciseNow();
  const created = await fetch(`${base}/v1/conversations`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ text: 'Say something long' }),
  });
  const { conversationId } = (await created.json()) as { conversationId: string };
  const stream = await fetch(`${base}/v1/conversations/${conversationId}/events`, { headers: HEADERS });
  return streamArrivals(stream, sentAt, 'event: run_started\n', 'event: model_text\n');
}

/** One AG-UI run input that starts a thread: RUN_STARTED, and the first TEXT_MESSAGE_CONTENT. */
async function agUiOnce(base: string): Promise<Arrival> {
  const sentAt = preciseNow();
  const stream = await fetch(`${base}/v1/ag-ui`, {
    method: 'POST',
    headers: { ...HEADERS, accept: 'text/event-stream' },
    body: JSON.stringify({
      threadId: `bench-${randomUUID()}`,
      runId: 'r1',
      messages: [{ id: 'u1', role: 'user', content: 'Say something long' }],
    }),
  });
  return streamArrivals(stream, sentAt, '"RUN_STARTED"', '"TEXT_MESSAGE_CONTENT"');
}

/** The A2A JavaScript SDK's client, as another team's agent builds it, with the bench's token. */
function a2aClient(base: string): Promise<A2AClient> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${TOKEN}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(base);
}

const isTextChunk = (event: StreamResponse) =>
  event.payload?.$case === 'artifactUpdate' && event.payload.value.artifact?.artifactId.startsWith('text-');

/** `SendStreamingMessage` with a new context: the task's first event, and its first text chunk. */
async function a2aOnce(client: A2AClient): Promise<Arrival> {
  const text: Part = {
    content: { $case: 'text', value: 'Say something long' },
    metadata: undefined,
    filename: '',
    mediaType: '',
  };
  const sentAt = preciseNow();
  let runStartedAt: number | undefined;
  const stream = client.sendMessageStream({
    tenant: '',
    message: {
      messageId: randomUUID(),
      contextId: '',
      taskId: '',
      role: 1,
      parts: [text],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  });
  for await (const event of stream) {
    runStartedAt ??= preciseNow();
    if (isTextChunk(event)) {
      const firstTextAt = preciseNow();
      await stream.return(undefined);
      return { sentAt, runStartedAt, firstTextAt };
    }
  }
  throw new Error('the A2A stream ended before any text');
}

/**
 * Bench 15: the open protocols beside the gateway's own event stream, all on one gateway with the
 * worker in a process of its own: from a request to the run's start seen at the client (an MCP tool
 * call to its first progress notification; an A2A streaming send to its task's first event; an
 * AG-UI run input to RUN_STARTED; a POST to the `run_started` event on its stream), and from the
 * model's first token to the first text at the client. The kinds take turns, sample by sample, so
 * that a slower moment of the machine falls on all of them alike.
 */
export async function protocolFirstText(context: BenchContext): Promise<ProtocolFirstTextResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: \`npm run bench\` builds it first`);
  const samples = context.quick ? 3 : 12;
  const model = await startPacedModel();
  const workspace = scratchDir('mcp-progress-');
  const taskQueue = `mcp-progress-${randomUUID()}`;
  const worker = cli(['worker', '--workspace', workspace], {
    ...process.env,
    TEMPORAL_ADDRESS: context.address,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    AGENT_MODEL: 'paced',
    AGENT_WORKSPACE_ROOTS: workspace,
  });
  const gateway = createGateway({
    agent: new AgentClient(context.durableClient, taskQueue),
    tokens: new GatewayTokens([{ name: 'bench', token: TOKEN, actions: ['*'] }]),
  });
  const mcp = new McpClient({ name: 'durable-agent bench', version: '1.0.0' });
  try {
    await stderrLine(worker, /worker on task queue/);
    const port = await freePort();
    await gateway.listen({ port, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${port}`;
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const a2a = await a2aClient(base);
    const kinds: Array<[keyof Omit<ProtocolFirstTextResult, 'table'>, () => Promise<Arrival>]> = [
      ['mcp', () => mcpOnce(mcp)],
      ['a2a', () => a2aOnce(a2a)],
      ['agUi', () => agUiOnce(base)],
      ['sse', () => sseOnce(base)],
    ];
    const arrivals = new Map(kinds.map(([kind]) => [kind, [] as Array<Arrival & { firstToken: number }>]));
    context.log(`  ${samples} rounds of MCP, A2A, AG-UI and the event stream ...`);
    for (let round = 0; round < samples; round++) {
      for (const [kind, once] of kinds) {
        const before = model.firstTokens.length;
        const arrival = await once();
        arrivals.get(kind)!.push({ ...arrival, firstToken: model.firstTokens[before]! });
      }
    }
    const rowsOf = (kind: keyof Omit<ProtocolFirstTextResult, 'table'>): Rows => {
      const of = arrivals.get(kind)!;
      return {
        runStarted: summarize(of.map((arrival) => arrival.runStartedAt - arrival.sentAt)),
        firstText: summarize(of.map((arrival) => arrival.firstTextAt - arrival.firstToken)),
      };
    };
    const result = { mcp: rowsOf('mcp'), a2a: rowsOf('a2a'), agUi: rowsOf('agUi'), sse: rowsOf('sse') };
    const row = (label: string, summary: Summary) => [
      label,
      summary.n,
      summary.median,
      summary.p95,
      summary.max,
    ];
    return {
      ...result,
      table: table(
        ['measured at the client', 'n', 'median ms', 'p95 ms', 'max ms'],
        [
          row('MCP tool call to its first progress notification (run started)', result.mcp.runStarted),
          row("A2A streaming send to its task's first event", result.a2a.runStarted),
          row('AG-UI run input to RUN_STARTED', result.agUi.runStarted),
          row('gateway POST to run_started on its event stream', result.sse.runStarted),
          row("model's first token to the first text in MCP progress", result.mcp.firstText),
          row("model's first token to the first A2A text artifact chunk", result.a2a.firstText),
          row("model's first token to the first AG-UI TEXT_MESSAGE_CONTENT", result.agUi.firstText),
          row("model's first token to the first model_text on the event stream", result.sse.firstText),
        ],
      ),
    };
  } finally {
    await mcp.close();
    await gateway.close();
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await model.close();
  }
}
