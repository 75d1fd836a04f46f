import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type RunningServer, startDevServer } from '../../src/temporal-server/dev-server';
import { startCluster, stopCluster } from '../../src/temporal-server/cluster/cluster';
import { findOrBuildTemporalServer } from '../../src/temporal-server/cluster/temporal-server-build';
import { freePort } from '../../src/platform/free-port';

export interface BenchServer extends RunningServer {
  /** The Temporal server's version, as `temporal-server --version` says it. */
  version: string;
}

/** Servers and clusters started and not yet stopped, so an interrupted run can stop them. */
const running = new Set<{ stop(): Promise<void> }>();

export async function stopAllBenchServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()));
}

/** Has an interrupted run stop `server` too (a peer's engine or database); returns the undoing. */
export function stopWithTheRun(server: { stop(): Promise<void> }): () => void {
  running.add(server);
  return () => running.delete(server);
}

/**
 * The project's embedded Temporal server (in memory unless `dbFile` is given, on a free port unless
 * `port` is, with the project's dynamic config), as `durable-agent run` starts it, with
 * `dynamicConfig` entries on top.
 */
export async function startBenchServer(
  options: {
    dynamicConfig?: Record<string, unknown>;
    log?: (line: string) => void;
    dbFile?: string;
    port?: number;
  } = {},
): Promise<BenchServer> {
  const log = options.log ?? console.log;
  const build = await findOrBuildTemporalServer(process.env, log);
  const server = await startDevServer({
    log,
    port: options.port ?? (await freePort()),
    ...(options.dbFile ? { dbFile: options.dbFile } : {}),
    dynamicConfig: options.dynamicConfig,
    readyTimeoutMs: 120_000,
  });
  const benchServer: BenchServer = {
    ...server,
    version: `temporal-server ${build.version} (one process, SQLite)`,
    async stop() {
      running.delete(benchServer);
      await server.stop();
    },
  };
  running.add(benchServer);
  return benchServer;
}

export interface BenchCluster {
  /** The frontend's address. */
  address: string;
  /** Stops its processes (the four services, then PostgreSQL) and removes its directory. */
  stop(): Promise<void>;
}

/**
 * A self-hosted cluster as `durable-agent cluster start` runs it (PostgreSQL and Temporal's four
 * services, the project's dynamic config file), in a temporary directory with its frontend on a
 * free port. The services run detached, so the cluster is registered for `stopAllBenchServers`
 * before it starts: an interrupted start leaves nothing running either.
 */
export async function startBenchCluster(log: (line: string) => void): Promise<BenchCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-cluster-'));
  let stopping: Promise<void> | undefined;
  const cluster: BenchCluster = {
    address: '',
    stop() {
      stopping ??= (async () => {
        running.delete(cluster);
        try {
          await stopCluster({ dir, env: process.env, log });
        } catch (error) {
          // Its directory stays: `durable-agent cluster stop --dir` stops what is left.
          throw new Error(`could not stop the bench's cluster in ${dir}: ${(error as Error).message}`);
        }
        await rm(dir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
  running.add(cluster);
  try {
    cluster.address = await startCluster({ dir, env: process.env, log, port: await freePort() });
  } catch (error) {
    await cluster.stop().catch(() => undefined);
    throw error;
  }
  return cluster;
}
