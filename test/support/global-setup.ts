import { startDevServer } from '../../src/worker/dev-server';
import { freePort } from '../../src/worker/free-port';
import { exportTestRun, findTestTemporalCli, writeTestWorkflowBundle } from './test-run';

/** One real Temporal dev server (in memory) and one workflow bundle for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const cliPath = await findTestTemporalCli();
  const server = await startDevServer({ cliPath, port: await freePort() });
  const bundlePath = await writeTestWorkflowBundle();
  await exportTestRun({ address: server.address, bundlePath, cliPath });
  (globalThis as Record<string, unknown>).__durableAgentTestServer = server;
}
