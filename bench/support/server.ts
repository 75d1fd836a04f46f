import { type RunningServer, startDevServer } from '../../src/worker/dev-server';
import { freePort } from '../../src/worker/free-port';
import { PROJECT_TOOLS_DIR } from '../../src/platform/paths';
import { findOrBuildTemporalCli } from '../../src/worker/temporal-cli';

export interface BenchServer extends RunningServer {
  /** The Temporal CLI found or built, or undefined when @temporalio/testing downloaded one. */
  cliPath: string | undefined;
}

/** Servers started and not yet stopped, so an interrupted run can stop them. */
const running = new Set<BenchServer>();

export async function stopAllBenchServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()));
}

/**
 * The project's embedded dev server (in memory unless `dbFile` is given, on a free port unless
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
  const cliPath = await findOrBuildTemporalCli({
    env: process.env,
    toolsDir: PROJECT_TOOLS_DIR,
    log: options.log ?? console.log,
  });
  const server = await startDevServer({
    cliPath,
    port: options.port ?? (await freePort()),
    ...(options.dbFile ? { dbFile: options.dbFile } : {}),
    dynamicConfig: options.dynamicConfig,
    readyTimeoutMs: 120_000,
  });
  const benchServer: BenchServer = {
    ...server,
    cliPath,
    async stop() {
      running.delete(benchServer);
      await server.stop();
    },
  };
  running.add(benchServer);
  return benchServer;
}
