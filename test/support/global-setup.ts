import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startDevServer } from '../../src/worker/dev-server';
import { freePort } from '../../src/worker/free-port';
import { PROJECT_TOOLS_DIR } from '../../src/platform/paths';
import { findOrBuildTemporalCli } from '../../src/worker/temporal-cli';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';

/** One real Temporal dev server (in memory) and one workflow bundle for the whole test run. */
export default async function globalSetup(): Promise<void> {
  const cliPath = await findOrBuildTemporalCli({
    env: process.env,
    toolsDir: PROJECT_TOOLS_DIR,
    log: console.log,
  });
  const server = await startDevServer({ cliPath, port: await freePort() });
  const code = await bundleAgentWorkflows();
  const bundlePath = path.join(os.tmpdir(), `durable-agent-workflows-${process.pid}.js`);
  await writeFile(bundlePath, code);
  process.env.TEST_TEMPORAL_ADDRESS = server.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  if (cliPath) process.env.TEST_TEMPORAL_CLI = cliPath;
  // Every worker and client in the run, child processes included, shares one blob directory.
  process.env.DURABLE_AGENT_BLOB_DIR = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-blobs-'));
  (globalThis as Record<string, unknown>).__durableAgentTestServer = server;
}
