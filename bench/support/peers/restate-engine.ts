import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { BenchContext } from '../context';
import { type Directive, directiveText } from '../model-server';
import { scratchDir } from '../scratch';
import { stopWithTheRun } from '../server';
import { REPO_ROOT, type WorkerProcess, startWorkerProcess } from '../worker-process';
import type { PeerConversation, PeerEngine } from './engine';
import { freePort } from './free-port';

const PEER_DIR = path.join(REPO_ROOT, 'bench', 'restate-peer');

/** The server binary that @restatedev/restate-server installs for this platform. */
function serverBinary(): string {
  const binary = path.join(
    PEER_DIR,
    'node_modules',
    '@restatedev',
    `restate-server-${process.platform}-${process.arch}`,
    'bin',
    'restate-server',
  );
  if (!existsSync(binary)) {
    throw new Error(`no Restate server binary for ${process.platform}-${process.arch} at ${binary}`);
  }
  return binary;
}

async function waitFor(url: string, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why) throw new Error(why);
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${url} not healthy after ${timeoutMs / 1_000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function checked(response: Response, what: string): Promise<Response> {
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${await response.text()}`);
  return response;
}

/**
 * Restate: the server binary from @restatedev/restate-server (one node, every role, its own data
 * directory, the default configuration: RocksDB with its write-ahead log fsynced), and the turn loop
 * as a virtual object in a service endpoint process (bench/restate-peer). Turns go through the
 * ingress and return when the handler has finished; the stored state is the object's state plus the
 * journals the server keeps of its invocations.
 */
export function restateEngine(context: BenchContext): PeerEngine {
  let server: ChildProcess | undefined;
  let forget = () => undefined as unknown;
  let serverLog = '';
  let ingress = '';
  let admin = '';

  const query = async (sql: string): Promise<Array<Record<string, unknown>>> => {
    const response = await checked(
      await fetch(`${admin}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: sql }),
      }),
      'Restate query',
    );
    return ((await response.json()) as { rows: Array<Record<string, unknown>> }).rows;
  };

  return {
    name: 'restate',
    crashDirective: { tool: 'sleep', args: { ms: 5_000 } },
    cannot: {},
    async start() {
      forget = stopWithTheRun(this);
      const binary = serverBinary();
      const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
      const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
      ingress = `http://127.0.0.1:${ingressPort}`;
      admin = `http://127.0.0.1:${adminPort}`;
      const dataDir = scratchDir('restate-');
      server = spawn(binary, ['--base-dir', dataDir, '--node-name', 'bench', '--no-logo'], {
        cwd: dataDir,
        env: {
          ...process.env,
          RESTATE_LISTEN_MODE: 'tcp',
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
          RESTATE_BIND_ADDRESS: `127.0.0.1:${nodePort}`,
          RESTATE_DISABLE_TELEMETRY: 'true',
          RESTATE_LOG_FILTER: 'error',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const keep = (chunk: Buffer) => {
        serverLog = (serverLog + chunk.toString()).slice(-4_000);
      };
      server.stdout?.on('data', keep);
      server.stderr?.on('data', keep);
      const exited = () =>
        server?.exitCode !== null || server.signalCode !== null
          ? `the Restate server exited (${server?.exitCode ?? server?.signalCode}): ${serverLog}`
          : undefined;
      await waitFor(`${admin}/health`, 60_000, exited);
      await waitFor(`${ingress}/restate/health`, 60_000, exited);
      return (
        `${version}: one node with every role, its default configuration (RocksDB write-ahead log ` +
        `fsynced, 24 partitions), data in a directory of its own; the service endpoint on Node ` +
        execFileSync(context.peerNode, ['--version'], { encoding: 'utf8' }).trim()
      );
    },
    async deployment() {
      const port = await freePort();
      let service: WorkerProcess | undefined;
      let registered = false;
      return {
        async startService() {
          service = await startWorkerProcess(
            path.join(PEER_DIR, 'src', 'service.ts'),
            { BENCH_MODEL_URL: context.model.baseUrl, BENCH_SERVICE_PORT: String(port) },
            context.peerNode,
          );
          if (!registered) {
            await checked(
              await fetch(`${admin}/deployments`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ uri: `http://127.0.0.1:${port}`, force: true }),
              }),
              'registering the Restate deployment',
            );
            registered = true;
          }
          return service;
        },
        async open(id) {
          let turns = 0;
          const conversation: PeerConversation = {
            id,
            get turns() {
              return turns;
            },
            async runTurn(directive: Omit<Directive, 'c' | 't'> = { tool: 'noop' }) {
              const text = directiveText({ c: id, t: ++turns, ...directive });
              await checked(
                await fetch(`${ingress}/Conversation/${encodeURIComponent(id)}/turn`, {
                  method: 'POST',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify(text),
                }),
                `turn ${turns} of ${id}`,
              );
            },
          };
          return conversation;
        },
        async stateBytes(conversation) {
          const key = conversation.id.replaceAll("'", "''");
          const [state] = await query(
            `SELECT sum(value_length) AS bytes FROM state WHERE service_name = 'Conversation' AND service_key = '${key}'`,
          );
          const [journals] = await query(
            `SELECT sum(j.raw_length) AS bytes FROM sys_journal j JOIN sys_invocation i ON j.id = i.id ` +
              `WHERE i.target_service_name = 'Conversation' AND i.target_service_key = '${key}'`,
          );
          return Number(state?.bytes ?? 0) + Number(journals?.bytes ?? 0);
        },
        async stop() {
          await service?.stop();
          service = undefined;
        },
      };
    },
    async stop() {
      forget();
      if (!server || server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server?.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
