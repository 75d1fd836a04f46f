import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestCluster, stopTestCluster, whatClusterNeeds } from './test-cluster';
import { exportTestRun, writeTestWorkflowBundle } from './test-run';
import { prepareTestServers } from './test-servers';

const log = (line: string) => console.log(`[cluster] ${line}`);

/**
 * `npm run test:cluster`: one self-hosted Temporal cluster (PostgreSQL and Temporal's four services
 * as processes of their own, as `durable-agent cluster` runs them) for the whole run instead of the
 * dev server, with the same workflow bundle, CLI and blob directory as global-setup.ts. Tests find
 * it as TEST_TEMPORAL_ADDRESS, and as TEST_CLUSTER_ADDRESS those that would otherwise start a cluster.
 */
export default async function clusterGlobalSetup(): Promise<void> {
  const missing = whatClusterNeeds('npm run test:cluster');
  if (missing) throw new Error(missing);
  // What these tests run, built before the cluster starts: Go builds one at a time.
  const { temporalCli } = await prepareTestServers(['temporal-server', 'temporal-cli'], console.log);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-test-cluster-'));
  process.env.TEST_CLUSTER_DIR = dir;
  try {
    // The cluster's start mostly waits on its processes; bundling meanwhile uses the other core.
    const [address, bundlePath] = await Promise.all([startTestCluster(dir, log), writeTestWorkflowBundle()]);
    await exportTestRun({ address, bundlePath, cliPath: temporalCli });
    process.env.TEST_CLUSTER_ADDRESS = address;
  } catch (error) {
    // Jest runs no teardown after a failed setup.
    await stopTestCluster(dir, log).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
