import { type RunningServer, startDevServer } from '../../src/worker/dev-server';
import { findOrBuildTemporalServer } from '../../src/worker/cluster/temporal-server-build';
import { freePort } from '../../src/worker/free-port';

export interface BenchServer extends RunningServer {
  /** The Temporal server's version, as `temporal-server --version` says it. */
  version: string;
}

/** Servers started and not yet stopped, so an interrupted run can stop them. */
const running = new Set<BenchServer>();

export async function stopAllBenchServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()));
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
