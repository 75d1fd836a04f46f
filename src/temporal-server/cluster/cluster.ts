import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isListening } from '../../platform/free-port';
import { serviceEnvironment } from './cluster-config';
import { type ClusterFiles, clusterFiles } from './cluster-files';
import { type FrontendHealth, frontendHealth, prepareClusterNamespace } from './cluster-frontend';
import type { TemporalConnectionOptions } from '../../client/temporal-connection-options';
import { lockCluster } from './cluster-lock';
import { FIRST_PORT, MAX_MEMBERSHIP_PORT, canBind, choosePort } from './cluster-ports';
import { logTail } from './cluster-processes';
import { type ClusterState, readClusterState, serviceHost, writeClusterState } from './cluster-state';
import {
  clusterConnectionOptions,
  clusterProfileUsage,
  clusterTlsFiles,
  prepareClusterTls,
} from './cluster-tls';
import { POSTGRES_MISSING, PostgresCluster, findPostgresBin, runningPostgres } from './postgres-cluster';
import { postgresUser } from './postgres-user';
import { findOrBuildTemporalServer } from './temporal-server-build';
import { updateTemporalSchema } from './temporal-schema';
import {
  TEMPORAL_SERVICES,
  type TemporalService,
  serviceRunning,
  startService,
  stopService,
} from './temporal-services';

/** The frontend's port when neither --port nor an earlier start chose one: Temporal's own. */
export const DEFAULT_FRONTEND_PORT = 7233;
/** The namespace registered on start: the one conversations run in without TEMPORAL_NAMESPACE. */
export const NAMESPACE = 'default';
const READY_TIMEOUT_MS = 180_000;
/**
 * Held by a start from choosing its ports until its processes listen on them, by every cluster of
 * this user on this machine: two starting at once chose the same free ports, and one failed.
 */
const STARTING_LOCK = path.join(
  os.tmpdir(),
  `durable-agent-cluster-starting-${process.getuid?.() ?? 0}.lock`,
);

export interface ClusterOptions {
  dir: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

/**
 * Starts what is not running of the cluster in `dir` (all of it the first time: PostgreSQL, its
 * databases and schema, then Temporal's four services), waits until the frontend serves, makes
 * sure of the namespace and search attributes, and returns the frontend's address. With `tls` the
 * services serve mTLS (cluster-tls.ts); without it, a start serves as the last one did. With `host`
 * the services listen on that address of this machine instead of 127.0.0.1 (PostgreSQL stays there),
 * so workers and clients on other machines reach the frontend; without it, as the last start did.
 */
export async function startCluster(
  options: ClusterOptions & { port?: number; host?: string; tls?: boolean },
): Promise<string> {
  const { env, log } = options;
  const postgresBin = findPostgresBin(env);
  if (!postgresBin) throw new Error(POSTGRES_MISSING);
  const build = await findOrBuildTemporalServer(env, log);
  const files = clusterFiles(path.resolve(options.dir));
  await mkdir(files.dir, { recursive: true, mode: 0o700 });
  const release = await lockCluster(files.lock, log);
  let releaseStarting: (() => void) | undefined;
  try {
    releaseStarting = await lockCluster(
      STARTING_LOCK,
      log,
      READY_TIMEOUT_MS,
      'to finish starting its cluster (one starts at a time: they choose free ports)',
    );
    const user = postgresUser(files.dir, log);
    // Another user runs PostgreSQL: it must pass through DIR and DIR/logs (not list them) to its own files.
    const mode = user.other ? 0o711 : 0o700;
    await chmod(files.dir, mode);
    await mkdir(files.logs, { recursive: true });
    await chmod(files.logs, mode);
    const postgres = new PostgresCluster(files, postgresBin, user, log);

    const recorded = await readClusterState(files.state);
    const tls = tlsOfStart(files, recorded, options.tls);
    const state = await planPorts(files, recorded, options.port, options.host, log);
    if (tls) state.tls = true;
    else delete state.tls;
    await writeClusterState(files.state, state);

    await postgres.ensureInitialized();
    if (postgres.pid() === undefined) {
      log(`Starting PostgreSQL on 127.0.0.1:${state.postgresPort}.`);
      await postgres.start(state.postgresPort);
    }
    if (state.schemaVersion !== build.version) {
      log(`Setting up Temporal ${build.version}'s schema in PostgreSQL.`);
      await updateTemporalSchema(build, state.postgresPort, postgres.password());
      state.schemaVersion = build.version;
      await writeClusterState(files.state, state);
    }

    const address = `${serviceHost(state)}:${state.services.frontend.grpcPort}`;
    const tlsFiles = clusterTlsFiles(files.dir);
    const secure = tls ? await prepareClusterTls(tlsFiles, address, NAMESPACE, log) : undefined;
    const environment = { ...serviceEnvironment(state, postgres.password()), ...secure?.environment };
    const down = TEMPORAL_SERVICES.filter(
      (service) => !serviceRunning(files, service, state.services[service].pid),
    );
    const launch = async (services: readonly TemporalService[]) => {
      for (const service of services)
        state.services[service].pid = startService(build, files, service, environment);
      await writeClusterState(files.state, state);
    };
    if (down.length > 0) {
      log(`Starting Temporal ${build.version}: ${down.join(', ')} (logs in ${files.logs}).`);
      await launch(down);
    }
    // A service starting writes the cluster's record in PostgreSQL when it is missing or differs
    // from its configuration (the first start, a new frontend port); of two at once, the one whose
    // write conflicts exits. Started again, it finds the record written.
    const relaunched = new Set<TemporalService>();
    await waitUntilReady(
      files,
      state,
      address,
      async (service) => {
        if (!down.includes(service) || relaunched.has(service)) return false;
        relaunched.add(service);
        log(`Temporal's ${service} service exited while starting; starting it again.`);
        await launch([service]);
        return true;
      },
      secure?.connection,
    );
    releaseStarting();
    releaseStarting = undefined;
    await prepareClusterNamespace(address, NAMESPACE, log, secure?.connection);
    log(`Temporal cluster ready on ${address} (${files.dir}).`);
    if (secure) log(`It serves mTLS only: clients connect with ${clusterProfileUsage(tlsFiles)}.`);
    return address;
  } finally {
    releaseStarting?.();
    release();
  }
}

/** Whether a start serves TLS: as asked, else as the last start did; a change waits for the services to stop. */
function tlsOfStart(
  files: ClusterFiles,
  recorded: ClusterState | undefined,
  requested: boolean | undefined,
): boolean {
  const was = recorded?.tls ?? false;
  if (requested === undefined || requested === was || !recorded) return requested ?? was;
  const running = TEMPORAL_SERVICES.some((service) =>
    serviceRunning(files, service, recorded.services[service].pid),
  );
  if (running) {
    throw new Error(
      `this cluster's services run ${was ? 'with' : 'without'} TLS: \`durable-agent cluster stop --dir ${files.dir}\` first, ` +
        `then start it ${requested ? 'with --tls' : 'with --no-tls'}`,
    );
  }
  return requested;
}

/**
 * The ports of the coming start: those of running processes as they are; a stopped one's recorded
 * ports again when they are free, else others (the frontend's excepted: clients know it, so its
 * port is kept or refused). The first time: the frontend on `port` (DEFAULT_FRONTEND_PORT), the
 * rest counted up from Temporal's usual ports. All of them on `host` (as recorded when absent),
 * which moves only while no service runs.
 */
async function planPorts(
  files: ClusterFiles,
  recorded: ClusterState | undefined,
  port: number | undefined,
  host: string | undefined,
  log: (line: string) => void,
): Promise<ClusterState> {
  const state: ClusterState = recorded ?? {
    version: 1,
    postgresPort: 0,
    frontendHttpPort: 0,
    services: {
      frontend: { grpcPort: port ?? DEFAULT_FRONTEND_PORT, membershipPort: 0 },
      history: { grpcPort: 0, membershipPort: 0 },
      matching: { grpcPort: 0, membershipPort: 0 },
      worker: { grpcPort: 0, membershipPort: 0 },
    },
  };
  const frontend = state.services.frontend;
  const frontendRunning = serviceRunning(files, 'frontend', frontend.pid);
  const runningAt = `${serviceHost(state)}:${frontend.grpcPort}`;
  if (port !== undefined && port !== frontend.grpcPort) {
    if (frontendRunning) {
      throw new Error(
        `this cluster's frontend runs on ${runningAt}: \`durable-agent cluster stop --dir ${files.dir}\` first to move it to ${port}`,
      );
    }
    frontend.grpcPort = port;
  }
  if (host !== undefined && host !== serviceHost(state)) {
    const anyRunning = TEMPORAL_SERVICES.some((service) =>
      serviceRunning(files, service, state.services[service].pid),
    );
    if (anyRunning) {
      throw new Error(
        `this cluster's services run on ${serviceHost(state)}: \`durable-agent cluster stop --dir ${files.dir}\` first to move them to ${host}`,
      );
    }
    if (host === '127.0.0.1') delete state.host;
    else state.host = host;
  }
  const serviceAddress = serviceHost(state);
  if (!frontendRunning && !(await canBind(frontend.grpcPort, serviceAddress))) {
    throw new Error(
      `${serviceAddress}:${frontend.grpcPort} is in use by another process (another Temporal server, \`durable-agent server\`?), ` +
        'or not an address of this machine: choose the frontend port with --port, the address with --host',
    );
  }

  const running = new Set<TemporalService>(
    TEMPORAL_SERVICES.filter((service) => serviceRunning(files, service, state.services[service].pid)),
  );
  const taken = new Set<number>([frontend.grpcPort]);
  for (const service of running) {
    taken.add(state.services[service].grpcPort);
    taken.add(state.services[service].membershipPort);
  }
  const postgres = runningPostgres(files);
  if (postgres) {
    state.postgresPort = postgres.port;
    taken.add(postgres.port);
  }
  /** The recorded port when it is still free on `bindHost`, else the next free one from `first`. */
  const keepOrChoose = async (
    what: string,
    recordedPort: number,
    first: number,
    last?: number,
    bindHost = serviceAddress,
  ) => {
    const free =
      recordedPort > 0 &&
      !taken.has(recordedPort) &&
      recordedPort <= (last ?? 65_535) &&
      (await canBind(recordedPort, bindHost));
    const chosen = free ? recordedPort : await choosePort(first, taken, last, bindHost);
    if (recordedPort > 0 && chosen !== recordedPort)
      log(`${what}: port ${recordedPort} is taken, using ${chosen}.`);
    taken.add(chosen);
    return chosen;
  };

  if (!postgres) {
    state.postgresPort = await keepOrChoose(
      'PostgreSQL',
      state.postgresPort,
      FIRST_PORT.postgres,
      undefined,
      '127.0.0.1',
    );
  }
  if (running.has('frontend')) taken.add(state.frontendHttpPort);
  else state.frontendHttpPort = await keepOrChoose('frontend HTTP', state.frontendHttpPort, FIRST_PORT.http);
  for (const service of TEMPORAL_SERVICES.filter((name) => !running.has(name))) {
    const ports = state.services[service];
    if (service !== 'frontend') {
      ports.grpcPort = await keepOrChoose(`${service} gRPC`, ports.grpcPort, FIRST_PORT.grpc);
    }
    ports.membershipPort = await keepOrChoose(
      `${service} membership`,
      ports.membershipPort,
      FIRST_PORT.membership,
      MAX_MEMBERSHIP_PORT,
    );
  }
  return state;
}

/**
 * Waits until every service lives and listens and the frontend reports itself serving. A service
 * that exits is handed to `relaunch`; when that declines, this fails with the end of its log.
 */
async function waitUntilReady(
  files: ClusterFiles,
  state: ClusterState,
  address: string,
  relaunch: (service: TemporalService) => Promise<boolean>,
  connection?: TemporalConnectionOptions,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    for (const service of TEMPORAL_SERVICES) {
      if (serviceRunning(files, service, state.services[service].pid) || (await relaunch(service))) continue;
      const log = files.logOf(service);
      throw new Error(`Temporal's ${service} service exited; the end of ${log}:\n${await logTail(log)}`);
    }
    if (!runningPostgres(files)) {
      const log = files.logOf('postgres');
      throw new Error(`PostgreSQL exited; the end of ${log}:\n${await logTail(log)}`);
    }
    const health = await frontendHealth(address, 2_000, connection);
    const silent: string[] = [];
    for (const service of TEMPORAL_SERVICES.filter((name) => name !== 'frontend')) {
      if (!(await isListening(serviceHost(state), state.services[service].grpcPort))) silent.push(service);
    }
    if (health.serving && silent.length === 0) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `the cluster is not ready after ${READY_TIMEOUT_MS / 1000} s: frontend ${health.detail}` +
          (silent.length > 0 ? `; not listening yet: ${silent.join(', ')}` : '') +
          `; logs in ${files.logs}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Stops the four services (SIGTERM, SIGKILL after a grace period) and then PostgreSQL. */
export async function stopCluster(options: ClusterOptions): Promise<void> {
  const { env, log } = options;
  const files = clusterFiles(path.resolve(options.dir));
  if (!existsSync(files.state) && !runningPostgres(files)) {
    log(`No cluster in ${files.dir}.`);
    return;
  }
  const release = await lockCluster(files.lock, log);
  try {
    const state = await readClusterState(files.state);
    if (state) {
      const running = TEMPORAL_SERVICES.filter((service) =>
        serviceRunning(files, service, state.services[service].pid),
      );
      if (running.length > 0) log(`Stopping ${running.join(', ')}.`);
      await Promise.all(running.map((service) => stopService(files, service, state.services[service].pid)));
      for (const service of TEMPORAL_SERVICES) delete state.services[service].pid;
      await writeClusterState(files.state, state);
    }
    if (runningPostgres(files)) {
      const postgresBin = findPostgresBin(env);
      if (!postgresBin)
        throw new Error(`PostgreSQL runs but pg_ctl, to stop it, is gone: ${POSTGRES_MISSING}`);
      log('Stopping PostgreSQL.');
      await new PostgresCluster(files, postgresBin, postgresUser(files.dir, log), log).stop();
    }
    log(`Temporal cluster in ${files.dir} stopped.`);
  } finally {
    release();
  }
}

export interface ProcessStatus {
  name: 'postgres' | TemporalService;
  /** The address it listens on. */
  host: string;
  /** The recorded process, whether or not it still runs. */
  pid?: number;
  running: boolean;
  port: number;
  membershipPort?: number;
  log: string;
}

export interface ClusterStatus {
  dir: string;
  address: string;
  processes: ProcessStatus[];
  frontend: FrontendHealth;
  /** Every process runs and the frontend serves. */
  healthy: boolean;
  /** For a cluster serving mTLS: the variables that point clients at its profile. */
  profile?: string;
}

/** What runs of the cluster in `dir`; undefined when there is no cluster there. */
export async function clusterStatus(dir: string): Promise<ClusterStatus | undefined> {
  const files = clusterFiles(path.resolve(dir));
  const state = await readClusterState(files.state);
  if (!state) return undefined;
  const postgres = runningPostgres(files);
  const processes: ProcessStatus[] = [
    {
      name: 'postgres',
      ...(postgres ? { pid: postgres.pid } : {}),
      host: '127.0.0.1',
      running: postgres !== undefined,
      port: postgres?.port ?? state.postgresPort,
      log: files.logOf('postgres'),
    },
    ...TEMPORAL_SERVICES.map((service) => {
      const { pid, grpcPort, membershipPort } = state.services[service];
      return {
        name: service,
        ...(pid !== undefined ? { pid } : {}),
        host: serviceHost(state),
        running: serviceRunning(files, service, pid),
        port: grpcPort,
        membershipPort,
        log: files.logOf(service),
      };
    }),
  ];
  const address = `${serviceHost(state)}:${state.services.frontend.grpcPort}`;
  const tlsFiles = clusterTlsFiles(files.dir);
  const frontend = processes.find((process) => process.name === 'frontend')!.running
    ? await frontendHealthOf(address, state.tls ? tlsFiles : undefined)
    : { serving: false, detail: 'its process is not running' };
  return {
    dir: files.dir,
    address,
    processes,
    frontend,
    healthy: frontend.serving && processes.every((process) => process.running),
    ...(state.tls ? { profile: clusterProfileUsage(tlsFiles) } : {}),
  };
}

/** The frontend's health, asked through the cluster's profile when it serves mTLS. */
async function frontendHealthOf(
  address: string,
  tlsFiles: ReturnType<typeof clusterTlsFiles> | undefined,
): Promise<FrontendHealth> {
  if (!tlsFiles) return frontendHealth(address);
  let connection: TemporalConnectionOptions;
  try {
    connection = clusterConnectionOptions(tlsFiles);
  } catch (error) {
    return { serving: false, detail: `no profile to ask it with: ${(error as Error).message}` };
  }
  return frontendHealth(address, undefined, connection);
}
