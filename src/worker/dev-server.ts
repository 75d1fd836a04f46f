import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';
import { childEnvironment } from '../tools/exec/child-environment';
import { freePort } from './free-port';

export interface DevServerOptions {
  /** A Temporal CLI; when absent, @temporalio/testing downloads one (needs internet). */
  cliPath?: string;
  port: number;
  /** Web UI port; the UI is off when absent. */
  uiPort?: number;
  /** The remote codec the Web UI asks to decode payloads. */
  uiCodecEndpoint?: string;
  /** SQLite file that keeps conversations across restarts; in memory when absent. */
  dbFile?: string;
  namespace?: string;
  /** Where the server's own output goes; kept in memory (last 8 KB) when absent. */
  logFile?: string;
  readyTimeoutMs?: number;
  /** Dynamic config values (`--dynamic-config-value KEY=JSON`), over `DEV_SERVER_DYNAMIC_CONFIG`. */
  dynamicConfig?: Record<string, unknown>;
}

/**
 * What the embedded server changes from Temporal's defaults. The dev server has one history shard,
 * and Temporal reads a shard's transfer queue (every workflow and activity task passes through it on
 * its way to a worker) at most 20 times a second, so under steady traffic each task waited 35-50 ms
 * there: 7 tasks a turn made a turn cost about 340 ms. At 1,000 reads a second the wait is gone
 * (BENCHMARKS.md, "Where a turn's time goes").
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.transferProcessorMaxPollRPS': 1_000,
};

/** `--dynamic-config-value` arguments for the defaults above with `overrides` on top. */
function dynamicConfigArgs(overrides: Record<string, unknown> = {}): string[] {
  return Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...overrides }).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}

export interface RunningServer {
  address: string;
  /** The server's process id, when it is a child of this process. */
  pid?: number;
  stop(): Promise<void>;
  /** Leaves the server running after this process exits (others still use it). */
  detach(): void;
}

/**
 * `temporal server start-dev` as a child process, ready when its frontend answers. We wait for
 * readiness ourselves because the SDK's helper gives the server only 5 s, too little on a busy machine.
 */
export async function startDevServer(options: DevServerOptions): Promise<RunningServer> {
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  if (options.dbFile) await mkdir(path.dirname(options.dbFile), { recursive: true, mode: 0o700 });
  if (!options.cliPath) return startDownloadedServer(options, namespace, address);
  // The server's HTTP and metrics ports are picked free here, but another process can take one
  // before the server binds it: then it starts again on others.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCliServer(options, options.cliPath, namespace, address);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

const PORT_ATTEMPTS = 3;

/** The server could not bind a port: another process has it. */
class PortTakenError extends Error {}

async function startCliServer(
  options: DevServerOptions,
  cliPath: string,
  namespace: string,
  address: string,
): Promise<RunningServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--http-port',
    String(await freePort()),
    '--metrics-port',
    String(await freePort()),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...(options.uiPort ? ['--ui-port', String(options.uiPort), '--ui-ip', '127.0.0.1'] : ['--headless']),
    ...(options.uiPort && options.uiCodecEndpoint ? ['--ui-codec-endpoint', options.uiCodecEndpoint] : []),
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...dynamicConfigArgs(options.dynamicConfig),
    ...Object.entries(SEARCH_ATTRIBUTE_TYPES).flatMap(([name, type]) => [
      '--search-attribute',
      `${name}=${type}`,
    ]),
  ];
  // With a log file the server writes to it directly, so it can outlive this process (detach()).
  const logFd = options.logFile ? openSync(options.logFile, 'a', 0o600) : undefined;
  const child = spawn(cliPath, args, {
    // The server needs none of this process's settings or secrets (model key, blob store
    // credentials); TEMPORAL_* ones could even change how the CLI starts it.
    env: childEnvironment(process.env),
    stdio: logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd],
  });
  if (logFd !== undefined) closeSync(logFd);
  const output = logFd === undefined ? captureOutput(child) : () => `(server output: ${options.logFile})`;
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
      resolve();
    }),
  );

  try {
    await waitUntilReady(address, namespace, options.readyTimeoutMs ?? 60_000, () => exited);
  } catch (error) {
    child.kill('SIGKILL');
    const said = logFd === undefined ? output() : await tailOf(options.logFile!);
    const message = `Temporal dev server did not start: ${(error as Error).message}\n${output()}`;
    throw /bind: address already in use/.test(said) ? new PortTakenError(message) : new Error(message);
  }
  return {
    address,
    pid: child.pid,
    detach() {
      child.unref();
    },
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

async function startDownloadedServer(
  options: DevServerOptions,
  namespace: string,
  address: string,
): Promise<RunningServer> {
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: '127.0.0.1',
      port: options.port,
      namespace,
      ui: options.uiPort !== undefined,
      uiPort: options.uiPort,
      dbFilename: options.dbFile,
      extraArgs: dynamicConfigArgs(options.dynamicConfig),
    },
  });
  return { address, stop: () => env.teardown(), detach: () => undefined };
}

async function waitUntilReady(
  address: string,
  namespace: string,
  timeoutMs: number,
  exited: () => string | undefined,
) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) throw new Error(`the server ${why}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(
    `no answer on ${address} within ${timeoutMs} ms (${(lastError as Error)?.message ?? 'no error'})`,
  );
}

function captureOutput(child: ChildProcess): () => string {
  let recent = '';
  const keep = (chunk: Buffer) => {
    recent = (recent + chunk.toString()).slice(-8_192);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return () => recent;
}

/** The end of the server's log file, where a failed start says why. */
async function tailOf(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.slice(-4_096);
}
