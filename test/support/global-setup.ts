import { startDevServer } from '../../src/temporal-server/dev-server';
import { freePort } from '../../src/platform/free-port';
import { exportTestRun, writeTestWorkflowBundle } from './test-run';
import { EVERY_TEST_SERVER, prepareTestServers } from './test-servers';

/**
 * Every program the tests run, built before any test starts (test-servers.ts); then one real
 * embedded Temporal server (in memory) and one workflow bundle for the whole test run.
 */
export default async function globalSetup(): Promise<void> {
  const { temporalCli } = await prepareTestServers(EVERY_TEST_SERVER, console.log);
  const server = await startDevServer({ port: await freePort(), log: console.log });
  const bundlePath = await writeTestWorkflowBundle();
  await exportTestRun({ address: server.address, bundlePath, cliPath: temporalCli });
  (globalThis as Record<string, unknown>).__durableAgentTestServer = server;
}
