import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { childEnvironment } from '../tools/exec/child-environment';
import { findOrBuildTemporalServer, findOrBuildTemporalUiServer } from './cluster/temporal-server-build';
import { preparedDataFile, recordPreparedDataFile } from './data-file-preparation';
import { servicePorts } from './dev-server-ports';
import { freePortExcept } from '../platform/free-port';
import { prepareNamespace } from './namespace-preparation';
import { type ProcessExit, captureOutput, exitOf, killGroup, tailOf } from './server-process';
import { startUiServer, waitForUi } from './temporal-ui-server';

export interface DevServerOptions {
  port: number;
  /** Web UI port; the UI is off when absent. */
  uiPort?: number;
  /** The remote codec the Web UI asks to decode payloads. */
  uiCodecEndpoint?: string;
  /**
   * SQLite file that keeps conversations across restarts (visibility goes to a second file beside
   * it); in memory when absent.
   */
  dbFile?: string;
  namespace?: string;
  /** Where the server's (and the Web UI's) own output goes; kept in memory (last 8 KB) when absent. */
  logFile?: string;
  readyTimeoutMs?: number;
  /** Dynamic config values, over `DEV_SERVER_DYNAMIC_CONFIG`. */
  dynamicConfig?: Record<string, unknown>;
  /** Where the progress of a first build of the server (or the Web UI) goes; stderr when absent. */
  log?: (line: string) => void;
  /**
   * Ports the caller will bind itself (a codec server beside the Web UI): the server's own other
   * ports are never these, nor `port` and `uiPort`.
   */
  keepFree?: readonly number[];
}

/**
 * What the embedded server changes from Temporal's defaults. The embedded server has one history
 * shard, and Temporal reads a shard's transfer queue (every workflow and activity task passes
 * through it on its way to a worker) at most 20 times a second, so under steady traffic each task
 * waited 35-50 ms there: 7 tasks a turn made a turn cost about 340 ms. At 1,000 reads a second the
 * wait is gone (docs/benchmarks/analysis.md, "Where a turn's time goes").
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'history.transferProcessorMaxPollRPS': 1_000,
  // With fleet model limits every model call waiting for its turn is an update in flight on the
  // endpoint's limiter workflow; Temporal's default admits 10 at once.
  'history.maxInFlightUpdates': 1_000,
  // A query that comes while the conversation's workflow task runs waits for its end in a buffer
  // that holds one by default; the others are refused and the client asks again after a backoff:
  // three queries at once (a page's state) took 1.5 to 2 s instead of 50 ms.
  'history.MaxBufferedQueryCount': 64,
  // A worker whose host is cut off (not stopped) keeps its long polls open at the frontend until its
  // connection is found dead, and tasks handed to them are lost until their heartbeat times out. The
  // frontend pings a connection quiet for 3 s and drops it 2 s later, instead of after 70 s.
  'frontend.keepAliveTime': '3s',
  'frontend.keepAliveTimeout': '2s',
};

/** The dynamic config file: the defaults above with `overrides` on top (JSON values are YAML). */
export function dynamicConfigFile(overrides: Record<string, unknown> = {}): string {
  return Object.entries({ ...DEV_SERVER_DYNAMIC_CONFIG, ...overrides })
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
    .join('');
}

/** How long closed conversations stay on the embedded server, as the Temporal CLI's dev server kept them. */
const RETENTION = '24h';

export interface RunningServer {
  address: string;
  /** The server's process id, when it is a child of this process. */
  pid?: number;
  stop(): Promise<void>;
  /** Leaves the server running after this process exits (others still use it). */
  detach(): void;
}

/**
 * The embedded Temporal server: the Temporal server build the cluster runs too
 * (scripts/build-temporal-server.mjs), as one process with all four services on SQLite, configured
 * only through the environment its built-in config template reads; beside it, when `uiPort` is
 * given, Temporal's Web UI server (scripts/build-temporal-ui-server.mjs). Resolves once the
 * namespace and the conversation search attributes are registered and the frontend serves them.
 *
 * On a data file, the port opens only once they are there: scripts, health checks and CI wait for
 * the port and then use it. The first start on a data file that lacks them registers them on a
 * port of its own, stops, and then starts on the port asked for. In memory, nobody but the caller
 * can know the server, and it is told when the server is ready.
 */
export async function startDevServer(options: DevServerOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const build = await findOrBuildTemporalServer(process.env, log);
  const ui = options.uiPort !== undefined ? await findOrBuildTemporalUiServer(process.env, log) : undefined;
  const namespace = options.namespace ?? 'default';
  // A port chosen but not bound yet is free to the kernel too: the preparing start (and the other
  // services' ports) must not take it, or a script waiting for it would reach the wrong server.
  const keepFree = [
    options.port,
    ...(options.uiPort !== undefined ? [options.uiPort] : []),
    ...(options.keepFree ?? []),
  ];
  const asked: DevServerOptions = { ...options, keepFree };
  if (options.dbFile) {
    await mkdir(path.dirname(options.dbFile), { recursive: true, mode: 0o700 });
    if (!(await preparedDataFile(options.dbFile, namespace))) {
      log(`Preparing ${options.dbFile} for namespace ${namespace} (once).`);
      const preparing = await startOnFreePorts(async () =>
        startServer(
          { ...asked, port: await freePortExcept(keepFree), uiPort: undefined },
          build.server,
          undefined,
        ),
      );
      await preparing.stop();
      await recordPreparedDataFile(options.dbFile, namespace);
    }
  }
  return startOnFreePorts(() => startServer(asked, build.server, ui?.uiServer));
}

/**
 * The server's other ports are picked free before it starts, but another process can take one
 * before the server binds it: then it starts again on others.
 */
async function startOnFreePorts(start: () => Promise<RunningServer>): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

const PORT_ATTEMPTS = 4;

/** The server could not bind a port: another process has it. */
class PortTakenError extends Error {}

/** Where the server's files go: beside the data file, or in a temporary directory of its own. */
interface ServerFiles {
  dir: string;
  /** Removes what was made for an in-memory server. */
  cleanUp(): Promise<void>;
  /** The template's SQLite variables. */
  database: Record<string, string>;
  /** A file of the server's beside its data (`temporal-<suffix>` in memory). */
  beside(suffix: string): string;
}

async function serverFiles(dbFile: string | undefined): Promise<ServerFiles> {
  if (dbFile) {
    const base = dbFile.replace(/\.db$/, '');
    const dir = path.dirname(dbFile);
    return {
      dir,
      cleanUp: async () => undefined,
      database: { DB: 'sqlite', DBNAME: dbFile, VISIBILITY_DBNAME: `${base}-visibility.db` },
      // Beside a data file `temporal.db`: temporal-dynamic-config.yaml, temporal-ports.json.
      beside: (suffix) => path.join(dir, `${path.basename(dbFile, '.db')}-${suffix}`),
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-temporal-'));
  return {
    dir,
    cleanUp: () => rm(dir, { recursive: true, force: true }),
    database: {
      DB: 'sqlite',
      // Named in-memory databases with a shared cache: every service of the process sees the same one.
      DBNAME: 'temporal',
      VISIBILITY_DBNAME: 'temporal_visibility',
      SQLITE_MODE: 'memory',
      SQLITE_CACHE: 'shared',
      SQLITE_JOURNAL_MODE: 'memory',
    },
    beside: (suffix) => path.join(dir, `temporal-${suffix}`),
  };
}

/** What the built-in config template reads: the database, the ports, the dynamic config file. */
async function serverEnvironment(options: DevServerOptions, files: ServerFiles) {
  const dynamicConfigPath = files.beside('dynamic-config.yaml');
  await writeFile(dynamicConfigPath, dynamicConfigFile(options.dynamicConfig), { mode: 0o600 });
  return {
    ...files.database,
    NUM_HISTORY_SHARDS: '1',
    LOG_LEVEL: 'warn',
    BIND_ON_IP: '127.0.0.1',
    ...(await servicePorts(
      options.port,
      options.dbFile ? files.beside('ports.json') : undefined,
      options.keepFree,
    )),
    DYNAMIC_CONFIG_FILE_PATH: dynamicConfigPath,
  };
}

/** The processes of one start: the server, and the Web UI server beside it when asked for. */
interface ServerProcesses {
  server: ChildProcess;
  serverExit: ProcessExit;
  ui?: { process: ChildProcess; exit: ProcessExit };
  /** What they wrote last, where a failed start says why. */
  output(): Promise<string>;
}

async function startServer(
  options: DevServerOptions,
  serverProgram: string,
  uiProgram: string | undefined,
): Promise<RunningServer> {
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  const files = await serverFiles(options.dbFile);
  const processes = await spawnProcesses(options, files, serverProgram, uiProgram, address, namespace);
  try {
    const timeoutMs = options.readyTimeoutMs ?? 60_000;
    const serverExited = processes.serverExit.exited;
    await waitUntilReady(address, namespace, timeoutMs, () =>
      serverExited() ? `the server ${serverExited()}` : undefined,
    );
    if (options.uiPort !== undefined && processes.ui) {
      const uiExit = processes.ui.exit;
      await waitForUi(options.uiPort, timeoutMs, () =>
        uiExit.exited() ? `the Web UI server ${uiExit.exited()}` : undefined,
      );
    }
  } catch (error) {
    processes.server.kill('SIGKILL');
    if (processes.ui?.process.pid !== undefined) killGroup(processes.ui.process.pid, 'SIGKILL');
    await processes.serverExit.done;
    const said = await processes.output();
    await files.cleanUp();
    const message = `Temporal server did not start: ${(error as Error).message}\n${said}`;
    throw /bind: address already in use/.test(said) ? new PortTakenError(message) : new Error(message);
  }
  return {
    address,
    pid: processes.server.pid,
    detach() {
      processes.server.unref();
      processes.ui?.process.unref();
    },
    stop: () => stopProcesses(processes, files),
  };
}

/** Starts the server process, and the Web UI server beside it when `uiProgram` and a port are given. */
async function spawnProcesses(
  options: DevServerOptions,
  files: ServerFiles,
  serverProgram: string,
  uiProgram: string | undefined,
  address: string,
  namespace: string,
): Promise<ServerProcesses> {
  const environment = await serverEnvironment(options, files);
  // With a log file the server writes to it directly, so it can outlive this process (detach()).
  const logFd = options.logFile ? openSync(options.logFile, 'a', 0o600) : undefined;
  const stdio: ['ignore', 'pipe' | number, 'pipe' | number] =
    logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd];
  // No authorizer: the server listens on 127.0.0.1 only (the flag silences the server's warning).
  // No config file: in a directory without a config/ folder the server reads its built-in template.
  const server = spawn(serverProgram, ['--allow-no-auth', 'start'], {
    cwd: files.dir,
    // The server needs none of this process's settings or secrets (model key, blob store
    // credentials); its environment is its whole configuration.
    env: { ...childEnvironment(process.env), ...environment },
    stdio,
  });
  const recent = logFd === undefined ? captureOutput(server) : undefined;
  const serverExit = exitOf(server);
  let ui: ServerProcesses['ui'];
  if (uiProgram && options.uiPort !== undefined && server.pid !== undefined) {
    const uiProcess = await startUiServer(uiProgram, files.dir, server.pid, {
      address,
      namespace,
      uiPort: options.uiPort,
      codecEndpoint: options.uiCodecEndpoint,
      stdio,
    });
    recent?.follow(uiProcess);
    ui = { process: uiProcess, exit: exitOf(uiProcess) };
  }
  if (logFd !== undefined) closeSync(logFd);
  return {
    server,
    serverExit,
    ...(ui ? { ui } : {}),
    output: async () => (recent ? recent.text() : await tailOf(options.logFile!)),
  };
}

/** SIGTERM, SIGKILL after a grace period; the Web UI with its watching shell. */
async function stopProcesses(processes: ServerProcesses, files: ServerFiles): Promise<void> {
  const { server, serverExit, ui } = processes;
  // The Web UI runs in a process group of its own, with the shell that ends it with the server.
  if (ui?.process.pid !== undefined && !ui.exit.exited()) killGroup(ui.process.pid, 'SIGTERM');
  if (!serverExit.exited()) {
    server.kill('SIGTERM');
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await serverExit.done;
    clearTimeout(timer);
  }
  if (ui && !ui.exit.exited()) {
    const timer = setTimeout(() => killGroup(ui.process.pid!, 'SIGKILL'), 5_000);
    await ui.exit.done;
    clearTimeout(timer);
  }
  await files.cleanUp();
}

/**
 * Waits until the frontend answers, then registers the namespace and the conversation search
 * attributes and waits until they are served (the services see a namespace's new attributes when
 * they next reload their namespaces, every 2 s, and a conversation that set them before would fail
 * its workflow task).
 */
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
    if (why) throw new Error(why);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        await prepareNamespace(connection, namespace, RETENTION);
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
