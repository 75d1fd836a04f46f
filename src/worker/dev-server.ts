import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';
import { childEnvironment } from '../tools/exec/child-environment';
import { MAX_MEMBERSHIP_PORT, canBind, choosePort } from './cluster/cluster-ports';
import { findOrBuildTemporalServer, findOrBuildTemporalUiServer } from './cluster/temporal-server-build';
import { TEMPORAL_SERVICES, type TemporalService } from './cluster/temporal-services';
import { freePort } from './free-port';
import { ensureSearchAttributes } from './search-attribute-registration';

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
 * given, Temporal's Web UI server (scripts/build-temporal-ui-server.mjs). Ready once the namespace
 * and the conversation search attributes are registered and the frontend serves them.
 */
export async function startDevServer(options: DevServerOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const build = await findOrBuildTemporalServer(process.env, log);
  const ui = options.uiPort !== undefined ? await findOrBuildTemporalUiServer(process.env, log) : undefined;
  if (options.dbFile) await mkdir(path.dirname(options.dbFile), { recursive: true, mode: 0o700 });
  // The server's other ports are picked free here, but another process can take one before the
  // server binds it: then it starts again on others.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(options, build.server, ui?.uiServer);
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
}

async function serverFiles(dbFile: string | undefined): Promise<ServerFiles> {
  if (dbFile) {
    const base = dbFile.replace(/\.db$/, '');
    return {
      dir: path.dirname(dbFile),
      cleanUp: async () => undefined,
      database: { DB: 'sqlite', DBNAME: dbFile, VISIBILITY_DBNAME: `${base}-visibility.db` },
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
  };
}

/** The services, each with a membership port of its own. */
const SERVICES = TEMPORAL_SERVICES;
type MembershipPorts = Record<TemporalService, number>;

/**
 * The membership ports of the four services. Temporal stores membership ports in a smallint
 * (cluster-ports.ts), so they are counted up from a random point below that limit rather than
 * asked of the kernel; the random start keeps servers started at once apart. A server on a data
 * file takes the ports it had last time when they are free (kept in `portsFile`): the database
 * still lists the last run's members for a while, and a server whose members are not those takes
 * 10 s longer to stop.
 */
async function membershipPorts(
  frontendPort: number,
  portsFile: string | undefined,
): Promise<MembershipPorts> {
  if (portsFile) {
    const last = await readFile(portsFile, 'utf8').then(
      (text) => JSON.parse(text) as Partial<Record<TemporalService, unknown>>,
      () => undefined,
    );
    const ports = SERVICES.map((service) => last?.[service]);
    const usable = (port: unknown): port is number =>
      Number.isInteger(port) && (port as number) > 0 && (port as number) <= MAX_MEMBERSHIP_PORT;
    if (
      last &&
      ports.every(usable) &&
      new Set([...ports, frontendPort]).size === ports.length + 1 &&
      (await Promise.all(ports.map((port) => canBind(port)))).every(Boolean)
    ) {
      return last as MembershipPorts;
    }
  }
  const taken = new Set<number>([frontendPort]);
  const start = 10_000 + Math.floor(Math.random() * 20_000);
  const chosen = {} as MembershipPorts;
  for (const service of SERVICES) {
    chosen[service] = await choosePort(start, taken, MAX_MEMBERSHIP_PORT);
    taken.add(chosen[service]);
  }
  if (portsFile) await writeFile(portsFile, `${JSON.stringify(chosen)}\n`, { mode: 0o600 });
  return chosen;
}

/** The template's port variables: the frontend on `frontendPort`, the rest free ports. */
async function servicePorts(
  frontendPort: number,
  portsFile: string | undefined,
): Promise<Record<string, string>> {
  const membership = await membershipPorts(frontendPort, portsFile);
  return {
    FRONTEND_GRPC_PORT: String(frontendPort),
    FRONTEND_HTTP_PORT: String(await freePort()),
    FRONTEND_MEMBERSHIP_PORT: String(membership.frontend),
    HISTORY_GRPC_PORT: String(await freePort()),
    HISTORY_MEMBERSHIP_PORT: String(membership.history),
    MATCHING_GRPC_PORT: String(await freePort()),
    MATCHING_MEMBERSHIP_PORT: String(membership.matching),
    WORKER_GRPC_PORT: String(await freePort()),
    WORKER_MEMBERSHIP_PORT: String(membership.worker),
  };
}

async function startServer(
  options: DevServerOptions,
  serverProgram: string,
  uiProgram: string | undefined,
): Promise<RunningServer> {
  const namespace = options.namespace ?? 'default';
  const address = `127.0.0.1:${options.port}`;
  const files = await serverFiles(options.dbFile);
  // Beside a data file `temporal.db`: temporal-dynamic-config.yaml, temporal-ports.json.
  const beside = (suffix: string) =>
    path.join(files.dir, `${options.dbFile ? path.basename(options.dbFile, '.db') : 'temporal'}-${suffix}`);
  const dynamicConfigPath = beside('dynamic-config.yaml');
  await writeFile(dynamicConfigPath, dynamicConfigFile(options.dynamicConfig), { mode: 0o600 });
  const environment = {
    ...files.database,
    NUM_HISTORY_SHARDS: '1',
    LOG_LEVEL: 'warn',
    BIND_ON_IP: '127.0.0.1',
    ...(await servicePorts(options.port, options.dbFile ? beside('ports.json') : undefined)),
    DYNAMIC_CONFIG_FILE_PATH: dynamicConfigPath,
  };

  // With a log file the server writes to it directly, so it can outlive this process (detach()).
  const logFd = options.logFile ? openSync(options.logFile, 'a', 0o600) : undefined;
  const stdio: ['ignore', 'pipe' | number, 'pipe' | number] =
    logFd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', logFd, logFd];
  // No authorizer: the server listens on 127.0.0.1 only (the flag silences the server's warning).
  // No config file: in a directory without a config/ folder the server reads its built-in template.
  const child = spawn(serverProgram, ['--allow-no-auth', 'start'], {
    cwd: files.dir,
    // The server needs none of this process's settings or secrets (model key, blob store
    // credentials); its environment is its whole configuration.
    env: { ...childEnvironment(process.env), ...environment },
    stdio,
  });
  const recent = logFd === undefined ? captureOutput(child) : undefined;
  const serverExit = exitOf(child);

  let uiProcess: ChildProcess | undefined;
  let uiExit: ReturnType<typeof exitOf> | undefined;
  if (uiProgram && options.uiPort !== undefined && child.pid !== undefined) {
    uiProcess = await startUiServer(uiProgram, files.dir, child.pid, {
      address,
      namespace,
      uiPort: options.uiPort,
      codecEndpoint: options.uiCodecEndpoint,
      stdio,
    });
    if (recent) recent.follow(uiProcess);
    uiExit = exitOf(uiProcess);
  }
  if (logFd !== undefined) closeSync(logFd);
  const output = async () => (recent ? recent.text() : await tailOf(options.logFile!));

  const stopAll = async () => {
    // The Web UI runs in a process group of its own, with the shell that ends it with the server.
    if (uiProcess?.pid !== undefined && !uiExit?.exited()) killGroup(uiProcess.pid, 'SIGTERM');
    if (!serverExit.exited()) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await serverExit.done;
      clearTimeout(timer);
    }
    if (uiExit && !uiExit.exited()) {
      const timer = setTimeout(() => killGroup(uiProcess!.pid!, 'SIGKILL'), 5_000);
      await uiExit.done;
      clearTimeout(timer);
    }
    await files.cleanUp();
  };

  try {
    await waitUntilReady(address, namespace, options.readyTimeoutMs ?? 60_000, () =>
      serverExit.exited() ? `the server ${serverExit.exited()}` : undefined,
    );
    if (options.uiPort !== undefined && uiExit) {
      await waitForUi(options.uiPort, options.readyTimeoutMs ?? 60_000, () =>
        uiExit.exited() ? `the Web UI server ${uiExit.exited()}` : undefined,
      );
    }
  } catch (error) {
    child.kill('SIGKILL');
    if (uiProcess?.pid !== undefined) killGroup(uiProcess.pid, 'SIGKILL');
    await serverExit.done;
    const said = await output();
    await files.cleanUp();
    const message = `Temporal server did not start: ${(error as Error).message}\n${said}`;
    throw /bind: address already in use/.test(said) ? new PortTakenError(message) : new Error(message);
  }
  return {
    address,
    pid: child.pid,
    detach() {
      child.unref();
      uiProcess?.unref();
    },
    stop: stopAll,
  };
}

/**
 * Temporal's Web UI server for the frontend at `address`, on 127.0.0.1:`uiPort`, run by a shell
 * that ends it once the server process `serverPid` is gone (however it ends: stop(), a crash, a
 * kill by another process after detach()). Its configuration is written beside the server's.
 */
async function startUiServer(
  program: string,
  dir: string,
  serverPid: number,
  settings: {
    address: string;
    namespace: string;
    uiPort: number;
    codecEndpoint: string | undefined;
    stdio: ['ignore', 'pipe' | number, 'pipe' | number];
  },
): Promise<ChildProcess> {
  const configDir = path.join(dir, 'temporal-ui-config');
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  const origins = [`http://127.0.0.1:${settings.uiPort}`, `http://localhost:${settings.uiPort}`];
  // JSON is YAML: the UI server reads this as its `embedded` environment's config.
  const config = {
    host: '127.0.0.1',
    port: settings.uiPort,
    temporalGrpcAddress: settings.address,
    enableUi: true,
    defaultNamespace: settings.namespace,
    // The page is served over plain HTTP on loopback, as the CLI's dev server served it.
    cors: { cookieInsecure: true, allowOrigins: origins },
    codec: { endpoint: settings.codecEndpoint ?? '' },
    disableNewsFetch: true,
    notifyOnNewVersion: false,
    hideLogs: true,
  };
  await writeFile(path.join(configDir, 'embedded.yaml'), `${JSON.stringify(config, null, 2)}\n`, {
    mode: 0o600,
  });
  const watcher = [
    '"$0" --root "$1" --config temporal-ui-config --env embedded start &',
    'ui=$!',
    'trap \'kill "$ui" 2>/dev/null; exit 0\' TERM INT',
    'while kill -0 "$2" 2>/dev/null && kill -0 "$ui" 2>/dev/null; do sleep 1; done',
    'kill "$ui" 2>/dev/null',
    'wait "$ui"',
  ].join('\n');
  const child = spawn('/bin/sh', ['-c', watcher, program, dir, String(serverPid)], {
    cwd: dir,
    env: childEnvironment(process.env),
    // A group of its own: stop() ends the shell and the UI server together.
    detached: true,
    stdio: settings.stdio,
  });
  child.on('error', () => undefined);
  return child;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** A child's exit: `exited()` says how once it has, `done` resolves then. */
function exitOf(child: ChildProcess): { exited: () => string | undefined; done: Promise<void> } {
  let how: string | undefined = child.exitCode !== null ? `exited with code ${child.exitCode}` : undefined;
  const done = new Promise<void>((resolve) => {
    if (how) return resolve();
    child.once('exit', (code, signal) => {
      how = `exited with ${signal ?? `code ${code}`}`;
      resolve();
    });
    child.once('error', (error) => {
      how = `could not run: ${error.message}`;
      resolve();
    });
  });
  return { exited: () => how, done };
}

/**
 * Waits until the frontend answers, then registers the namespace and the conversation search
 * attributes, and waits until a visibility query on those attributes is served: the services see
 * a namespace's new attributes when they next reload their namespaces (every 2 s), and a
 * conversation that set them before would fail its workflow task.
 */
async function waitUntilReady(
  address: string,
  namespace: string,
  timeoutMs: number,
  exited: () => string | undefined,
) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  let registered = false;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) throw new Error(why);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        if (!registered) {
          await registerNamespace(connection, namespace);
          await registerSearchAttributes(connection, namespace);
          registered = true;
        }
        await connection.workflowService.listWorkflowExecutions({
          namespace,
          pageSize: 1,
          query: READY_QUERY,
        });
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

/** A query the frontend refuses until it knows every conversation search attribute. */
const READY_QUERY = Object.keys(SEARCH_ATTRIBUTE_TYPES)
  .map((name) => `${name} IS NULL`)
  .join(' AND ');

/** gRPC's ALREADY_EXISTS. */
const ALREADY_EXISTS = 6;

async function registerNamespace(connection: Connection, namespace: string): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(RETENTION),
    });
  } catch (error) {
    if (!isGrpcServiceError(error) || error.code !== ALREADY_EXISTS) throw error;
  }
}

async function registerSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  let why = '';
  if (!(await ensureSearchAttributes(connection, namespace, (message) => (why = message)))) {
    throw new Error(why);
  }
}

/** Waits until the Web UI answers on 127.0.0.1:`port`. */
async function waitForUi(port: number, timeoutMs: number, exited: () => string | undefined) {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) throw new Error(why);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
      lastError = new Error(`HTTP ${response.status}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `the Web UI did not answer on 127.0.0.1:${port} within ${timeoutMs} ms (${(lastError as Error)?.message ?? 'no error'})`,
  );
}

/** The last 8 KB the server (and the Web UI server) wrote. */
function captureOutput(child: ChildProcess): { text: () => string; follow: (other: ChildProcess) => void } {
  let recent = '';
  const keep = (chunk: Buffer) => {
    recent = (recent + chunk.toString()).slice(-8_192);
  };
  const follow = (other: ChildProcess) => {
    other.stdout?.on('data', keep);
    other.stderr?.on('data', keep);
  };
  follow(child);
  return { text: () => recent, follow };
}

/** The end of the server's log file, where a failed start says why. */
async function tailOf(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.slice(-4_096);
}
