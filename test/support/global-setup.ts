import { startDevServer } from '../../src/temporal-server/dev-server';
import { freePort } from '../../src/platform/free-port';
import { exportTestRun, findTestTemporalCli, writeTestWorkflowBundle } from './test-run';

/** One real embedded Temporal server (in memory) and one workflow bundle for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const cliPath = await findTestTemporalCli();
  const server = await startDevServer({ port: await freePort(), log: console.log });
  const bundlePath = await writeTestWorkflowBundle();
  await exportTestRun({ address: server.address, bundlePath, cliPath });
  (globalThis as Record<string, unknown>).__durableAgentTestServer = server;
}
