import { rm } from 'node:fs/promises';
import { stopTestCluster } from './test-cluster';
import { removeTestRunFiles } from './test-run';

/** Stops the run's cluster (its four services, then PostgreSQL) and removes it and the run's files. */
export default async function clusterGlobalTeardown(): Promise<void> {
  const dir = process.env.TEST_CLUSTER_DIR;
  try {
    if (dir) await stopTestCluster(dir, (line) => console.log(`[cluster] ${line}`));
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
    await removeTestRunFiles();
  }
}
