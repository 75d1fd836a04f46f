import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
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

export interface McpProgressResult {
  /** Request to the run's start seen at the client; the model's first token to the first text there. */
  mcpRunStarted: Summary;
  mcpFirstText: Summary;
  sseRunStarted: Summary;
  sseFirstText: Summary;
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

/** `POST /v1/conversations`, then its event stream: the `run_started` event, and the first `model_text`. */
async function sseOnce(base: string): Promise<Arrival> {
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const sentAt = preciseNow();
  const created = await fetch(`${base}/v1/conversations`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ text: 'Say something long' }),
  });
  const { conversationId } = (await created.json()) as { conversationId: string };
  const stream = await fetch(`${base}/v1/conversations/${conversationId}/events`, { headers });
  const reader = stream.body!.getReader();
  const decoder = new TextDecoder();
  let seen = '';
  let runStartedAt: number | undefined;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the event stream ended before any text');
      seen += decoder.decode(value, { stream: true });
      if (runStartedAt === undefined && seen.includes('event: run_started\n')) runStartedAt = preciseNow();
      if (seen.includes('event: model_text\n'))
        return { sentAt, runStartedAt: runStartedAt!, firstTextAt: preciseNow() };
    }
  } finally {
    await reader.cancel();
  }
}

/**
 * Bench 15: the agent as an MCP server beside the gateway's own event stream, both on one gateway
 * with the worker in a process of its own: from a request to the run's start seen at the client (an
 * MCP tool call to its first progress notification; a POST to the `run_started` event on its
 * stream), and from the model's first token to the first text at the client.
 */
export async function mcpProgress(context: BenchContext): Promise<McpProgressResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: \`npm run bench\` builds it first`);
  const samples = context.quick ? 3 : 8;
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
    const measure = async (what: string, once: () => Promise<Arrival>) => {
      context.log(`  ${what} ...`);
      const before = model.firstTokens.length;
      const arrivals: Arrival[] = [];
      for (let i = 0; i < samples; i++) arrivals.push(await once());
      const firstTokens = model.firstTokens.slice(before);
      return {
        runStarted: summarize(arrivals.map((arrival) => arrival.runStartedAt - arrival.sentAt)),
        firstText: summarize(arrivals.map((arrival, index) => arrival.firstTextAt - firstTokens[index]!)),
      };
    };
    const mcpRows = await measure('MCP tool call, progress notifications', () => mcpOnce(mcp));
    const sseRows = await measure('gateway event stream', () => sseOnce(base));
    const row = (label: string, summary: Summary) => [
      label,
      summary.n,
      summary.median,
      summary.p95,
      summary.max,
    ];
    return {
      mcpRunStarted: mcpRows.runStarted,
      mcpFirstText: mcpRows.firstText,
      sseRunStarted: sseRows.runStarted,
      sseFirstText: sseRows.firstText,
      table: table(
        ['measured at the client', 'n', 'median ms', 'p95 ms', 'max ms'],
        [
          row('MCP tool call to its first progress notification (run started)', mcpRows.runStarted),
          row('gateway POST to run_started on its event stream', sseRows.runStarted),
          row("model's first token to the first text in MCP progress", mcpRows.firstText),
          row("model's first token to the first model_text on the event stream", sseRows.firstText),
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
