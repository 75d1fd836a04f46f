import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { type RunningServer, startDevServer } from '../../src/worker/dev-server';
import { freePort } from '../../src/worker/free-port';
import { PROJECT_TOOLS_DIR } from '../../src/worker/paths';
import { findOrBuildTemporalCli } from '../../src/worker/temporal-cli';
import { scratchDir } from './scratch';

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
 * The project's embedded dev server (in memory, on a free port), as `durable-agent run` starts it,
 * with `dynamicConfig` entries as `--dynamic-config-value` flags: through a wrapper script around
 * the CLI found, or as extra arguments of the server @temporalio/testing downloads when none is.
 */
export async function startBenchServer(
  options: { dynamicConfig?: Record<string, unknown>; log?: (line: string) => void } = {},
): Promise<BenchServer> {
  const found = await findOrBuildTemporalCli({
    env: process.env,
    toolsDir: PROJECT_TOOLS_DIR,
    log: options.log ?? console.log,
  });
  const flags = Object.entries(options.dynamicConfig ?? {}).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
  const port = await freePort();
  let server: RunningServer;
  if (!found) {
    const env = await TestWorkflowEnvironment.createLocal({
      server: { ip: '127.0.0.1', port, extraArgs: flags },
    });
    server = { address: `127.0.0.1:${port}`, stop: () => env.teardown(), detach: () => undefined };
  } else {
    let cliPath = found;
    if (flags.length) {
      cliPath = path.join(scratchDir('temporal-cli-'), 'temporal');
      const quoted = flags.map((flag) => `'${flag.replaceAll("'", "'\\''")}'`).join(' ');
      writeFileSync(cliPath, `#!/bin/sh\nexec '${found}' "$@" ${quoted}\n`);
      chmodSync(cliPath, 0o755);
    }
    server = await startDevServer({ cliPath, port, readyTimeoutMs: 120_000 });
  }
  const benchServer: BenchServer = {
    ...server,
    cliPath: found,
    async stop() {
      running.delete(benchServer);
      await server.stop();
    },
  };
  running.add(benchServer);
  return benchServer;
}
