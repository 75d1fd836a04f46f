import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { PROTOCOL_VERSION, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { scratchDir } from './support/scratch';
import { type Summary, summarize, table } from './support/stats';
import { REPO_ROOT } from './support/worker-process';

const CLI = path.join(REPO_ROOT, 'dist', 'cli', 'cli.js');
/**
 * The answer streams in this many pieces, this far apart: three seconds, longer than a heartbeat
 * interval, so a watcher away from the worker has a heartbeat to see it in.
 */
const PIECES = 60;
const PIECE_MS = 50;

export interface FirstTextResult {
  /** Model server's first token written to the first text arriving at this process, by where it arrived. */
  runInProcess: Summary;
  runSeparateWorker: Summary;
  /** The same with the push endpoint serving TLS, a certificate the worker made, pinned by the watcher. */
  runSeparateWorkerTls: Summary;
  /** The same with the worker's push endpoint off: text from heartbeats only, as before it existed. */
  runSeparateWorkerHeartbeats: Summary;
  acpInProcess: Summary;
  acpSeparateWorker: Summary;
  acpSeparateWorkerTls: Summary;
  /** Through the gateway (its own process, the worker apart): its event stream, and AG-UI from the run input. */
  gatewayEvents: Summary;
  agUi: Summary;
  table: string;
}

/** A model that streams its answer slowly, noting when each answer's first token was written. */
export async function startPacedModel(): Promise<{
  baseUrl: string;
  firstTokens: number[];
  close(): Promise<void>;
}> {
  const firstTokens: number[] = [];
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        `data: ${JSON.stringify({ id: 'paced', object: 'chat.completion.chunk', created: 0, model: 'paced', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      response.write(chunk({ role: 'assistant' }));
      let sent = 0;
      const next = () => {
        if (sent === 0) firstTokens.push(preciseNow());
        response.write(chunk({ content: `word${sent} ` }));
        if (++sent < PIECES) setTimeout(next, PIECE_MS);
        else response.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    firstTokens,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function cli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Resolves when the process writes a line matching `pattern` on stderr. */
export function stderrLine(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before ${pattern}: ${seen}`)));
  });
}

/** `run --json`: when the first model_text event reaches its stdout. */
async function runOnce(env: NodeJS.ProcessEnv, args: string[]): Promise<number> {
  const child = cli(['run', '--json', ...args, 'Say something long'], env);
  return new Promise((resolve, reject) => {
    let partial = '';
    let arrived: number | undefined;
    child.stdout!.on('data', (chunk: Buffer) => {
      partial += chunk.toString();
      if (arrived === undefined && partial.includes('"type":"model_text"')) arrived = preciseNow();
    });
    child.on('exit', (code) =>
      code === 0 && arrived !== undefined ? resolve(arrived) : reject(new Error(`run exited ${code}`)),
    );
  });
}

/** `acp`: one session, prompt after prompt; when each turn's first agent_message_chunk arrives. */
async function acpSamples(
  env: NodeJS.ProcessEnv,
  args: string[],
  samples: number,
  cwd: string,
): Promise<number[]> {
  const child = cli(['acp', ...args], env);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.stderr!.resume();
  const arrivals: number[] = [];
  let waiting = true;
  const fromAgent = new PassThrough();
  child.stdout!.pipe(fromAgent);
  const { agent } = client({ name: 'durable-agent bench' })
    .onNotification(methods.client.session.update, ({ params: { update } }) => {
      if (waiting && update.sessionUpdate === 'agent_message_chunk') {
        arrivals.push(preciseNow());
        waiting = false;
      }
    })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: 'cancelled' } }))
    .connect(
      ndJsonStream(Writable.toWeb(child.stdin!), Readable.toWeb(fromAgent) as ReadableStream<Uint8Array>),
    );
  try {
    await agent.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    for (let i = 0; i < samples; i++) {
      waiting = true;
      await agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: 'Say something long' }],
      });
    }
    return arrivals;
  } finally {
    child.stdin!.end();
    await exited;
  }
}

/** Reads a streamed response until `done` is true of all it has read; when `first` first was, by the clock. */
async function readStream(
  response: Response,
  first: (text: string) => boolean,
  done: (text: string) => boolean,
): Promise<number> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let arrived: number | undefined;
  try {
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
      if (arrived === undefined && first(text)) arrived = preciseNow();
      if (done(text)) break;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (arrived === undefined) throw new Error(`the stream ended without its first text: ${text.slice(-500)}`);
  return arrived;
}

/**
 * Through the gateway: `events`, a conversation started, its event stream opened, then the message
 * sent (first `model_text` event); `ag-ui`, one AG-UI run input that starts the conversation (first
 * TEXT_MESSAGE_CONTENT).
 */
async function gatewaySamples(url: string, token: string, samples: number, kind: 'events' | 'ag-ui') {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const arrivals: number[] = [];
  for (let i = 0; i < samples; i++) {
    const id = `bench-${randomUUID()}`;
    if (kind === 'ag-ui') {
      const response = await fetch(`${url}/v1/ag-ui`, {
        method: 'POST',
        headers: { ...headers, accept: 'text/event-stream' },
        body: JSON.stringify({
          threadId: id,
          runId: 'r1',
          messages: [{ id: 'u1', role: 'user', content: 'Say something long' }],
        }),
      });
      arrivals.push(
        await readStream(
          response,
          (text) => text.includes('"TEXT_MESSAGE_CONTENT"'),
          (text) => text.includes('"RUN_FINISHED"'),
        ),
      );
      continue;
    }
    await fetch(`${url}/v1/conversations`, { method: 'POST', headers, body: JSON.stringify({ id }) });
    const stream = await fetch(`${url}/v1/conversations/${id}/events`, { headers });
    await fetch(`${url}/v1/conversations/${id}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ text: 'Say something long' }),
    });
    arrivals.push(
      await readStream(
        stream,
        (text) => text.includes('event: model_text'),
        (text) => text.includes('event: run_finished'),
      ),
    );
  }
  return arrivals;
}

/** The gateway command in its own process, on a free port, with one token that may do everything. */
async function withGateway<T>(
  gatewayEnv: NodeJS.ProcessEnv,
  workspace: string,
  body: (url: string, token: string) => Promise<T>,
): Promise<T> {
  const token = `bench-${randomUUID()}`;
  const tokens = path.join(workspace, `tokens-${randomUUID()}.json`);
  writeFileSync(tokens, JSON.stringify({ tokens: [{ name: 'bench', token, actions: ['*'] }] }));
  const gateway = cli(['gateway', '--tokens', tokens, '--port', '0'], gatewayEnv);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      gateway.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        const listening = /gateway listening on (\S+)/.exec(seen);
        if (listening) resolve(listening[1]!);
      });
      gateway.on('exit', (code) => reject(new Error(`the gateway exited ${code}: ${seen}`)));
    });
    return await body(url, token);
  } finally {
    gateway.kill('SIGTERM');
    await new Promise((resolve) => gateway.on('exit', resolve));
  }
}

/**
 * Bench 7: how soon the model's first words reach a person: from the model server writing its
 * first token to the first text at `run --json`'s stdout and at an ACP client, with the worker in
 * the same process (text handed over as it arrives) and in a process of its own (text read from
 * the worker's push endpoint as it streams, in plain HTTP and over TLS with a certificate the worker
 * made and the watcher pins; with the endpoint off, from heartbeats, sent at most once a second,
 * read by polling every 200 ms); and through the gateway, in a process of its own: its event
 * stream, and AG-UI from the run input to the first TEXT_MESSAGE_CONTENT.
 */
export async function firstText(context: BenchContext): Promise<FirstTextResult> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: \`npm run bench\` builds it first`);
  const samples = context.quick ? 3 : 8;
  const model = await startPacedModel();
  const workspace = scratchDir('first-text-');
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    TEMPORAL_ADDRESS: context.address,
    AGENT_TASK_QUEUE: `first-text-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'bench',
    AGENT_MODEL: 'paced',
    AGENT_WORKSPACE_ROOTS: workspace,
  });
  const latencies = (arrivals: number[], firstTokens: number[]) =>
    arrivals.map((arrival, index) => arrival - firstTokens[index]!);
  const measure = async (what: string, body: () => Promise<number[]>) => {
    context.log(`  ${what} ...`);
    const before = model.firstTokens.length;
    const arrivals = await body();
    return summarize(latencies(arrivals, model.firstTokens.slice(before)));
  };
  const withWorker = async <T>(workerEnv: NodeJS.ProcessEnv, body: () => Promise<T>): Promise<T> => {
    const worker = cli(['worker', '--workspace', workspace], workerEnv);
    try {
      await stderrLine(worker, /worker on task queue/);
      return await body();
    } finally {
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker.on('exit', resolve));
    }
  };

  try {
    const runInProcess = await measure('run, worker in its process', async () => {
      const arrivals: number[] = [];
      for (let i = 0; i < samples; i++) arrivals.push(await runOnce(env(), ['--workspace', workspace]));
      return arrivals;
    });
    const separate = env();
    const runSeparateWorker = await measure('run, worker apart', () =>
      withWorker(separate, async () => {
        const arrivals: number[] = [];
        for (let i = 0; i < samples; i++) {
          arrivals.push(await runOnce(separate, ['--no-worker', '--workspace', workspace]));
        }
        return arrivals;
      }),
    );
    // On loopback the endpoint serves plain HTTP unless told; beyond it TLS is its default.
    const overTls = { ...env(), AGENT_LIVE_TLS: 'on' };
    const runSeparateWorkerTls = await measure('run, worker apart, push endpoint over TLS', () =>
      withWorker(overTls, async () => {
        const arrivals: number[] = [];
        for (let i = 0; i < samples; i++) {
          arrivals.push(await runOnce(overTls, ['--no-worker', '--workspace', workspace]));
        }
        return arrivals;
      }),
    );
    const heartbeatsOnly = { ...env(), AGENT_LIVE_ENDPOINT: 'off' };
    const runSeparateWorkerHeartbeats = await measure('run, worker apart, push endpoint off', () =>
      withWorker(heartbeatsOnly, async () => {
        const arrivals: number[] = [];
        for (let i = 0; i < samples; i++) {
          arrivals.push(await runOnce(heartbeatsOnly, ['--no-worker', '--workspace', workspace]));
        }
        return arrivals;
      }),
    );
    const acpInProcess = await measure('acp, worker in its process', () =>
      acpSamples(env(), [], samples, workspace),
    );
    const apart = env();
    const acpSeparateWorker = await measure('acp, worker apart', () =>
      withWorker(apart, () => acpSamples(apart, ['--no-worker'], samples, workspace)),
    );
    const acpOverTls = { ...env(), AGENT_LIVE_TLS: 'on' };
    const acpSeparateWorkerTls = await measure('acp, worker apart, push endpoint over TLS', () =>
      withWorker(acpOverTls, () => acpSamples(acpOverTls, ['--no-worker'], samples, workspace)),
    );
    const throughGateway = env();
    const gatewayEvents = await measure('gateway event stream, worker apart', () =>
      withWorker(throughGateway, () =>
        withGateway(throughGateway, workspace, (url, token) => gatewaySamples(url, token, samples, 'events')),
      ),
    );
    const agUi = await measure('AG-UI run input, worker apart', () =>
      withWorker(throughGateway, () =>
        withGateway(throughGateway, workspace, (url, token) => gatewaySamples(url, token, samples, 'ag-ui')),
      ),
    );
    const row = (label: string, summary: Summary) => [
      label,
      summary.n,
      summary.median,
      summary.p95,
      summary.max,
    ];
    return {
      runInProcess,
      runSeparateWorker,
      runSeparateWorkerTls,
      runSeparateWorkerHeartbeats,
      acpInProcess,
      acpSeparateWorker,
      acpSeparateWorkerTls,
      gatewayEvents,
      agUi,
      table: table(
        ['first text at', 'n', 'median ms', 'p95 ms', 'max ms'],
        [
          row('run stdout, worker in-process', runInProcess),
          row('run stdout, separate worker (push endpoint)', runSeparateWorker),
          row('run stdout, separate worker (push endpoint, TLS)', runSeparateWorkerTls),
          row('run stdout, separate worker, heartbeats only', runSeparateWorkerHeartbeats),
          row('ACP client, worker in-process', acpInProcess),
          row('ACP client, separate worker (push endpoint)', acpSeparateWorker),
          row('ACP client, separate worker (push endpoint, TLS)', acpSeparateWorkerTls),
          row('gateway event stream, separate gateway and worker', gatewayEvents),
          row('AG-UI run input, separate gateway and worker', agUi),
        ],
      ),
    };
  } finally {
    await model.close();
  }
}
