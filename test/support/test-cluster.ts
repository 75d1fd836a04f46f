import { spawnSync } from 'node:child_process';
import { startCluster, stopCluster } from '../../src/temporal-server/cluster/cluster';
import { POSTGRES_MISSING, findPostgresBin } from '../../src/temporal-server/cluster/postgres-cluster';
import { BUILD_SCRIPT } from '../../src/temporal-server/cluster/temporal-server-build';
import { unclaimedPort } from './unclaimed-port';

/**
 * Why this machine cannot run a cluster (no PostgreSQL; no Go and no server built yet), if it
 * cannot. `what` names who needs it in the message.
 */
export function whatClusterNeeds(what: string): string | undefined {
  if (!findPostgresBin()) return `${what} needs PostgreSQL: ${POSTGRES_MISSING}`;
  const result = spawnSync(process.execPath, [BUILD_SCRIPT, '--missing'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${BUILD_SCRIPT} --missing failed: ${result.stderr}`);
  const commands = JSON.parse(result.stdout) as string[];
  return commands.length > 0
    ? `${what} builds the Temporal server with ${commands.join(' and ')}, which is missing (https://go.dev/dl/)`
    : undefined;
}

/** A cluster in `dir` with its frontend on a free port; returns the frontend's address. */
export async function startTestCluster(dir: string, log: (line: string) => void): Promise<string> {
  return startCluster({ dir, env: process.env, log, port: await unclaimedPort() });
}

/** Stops the cluster in `dir`: its four services, then PostgreSQL. */
export function stopTestCluster(dir: string, log: (line: string) => void): Promise<void> {
  return stopCluster({ dir, env: process.env, log });
}
