import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_TOOLS_DIR } from '../../src/platform/paths';
import { findOrBuildTemporalCli } from '../../src/temporal-server/temporal-cli';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';

/**
 * What every test run shares, whichever Temporal server it runs on (the embedded server of
 * global-setup.ts, the cluster of cluster-global-setup.ts): the `temporal` CLI, one workflow
 * bundle and one blob directory, handed to tests through the environment.
 */

/**
 * The `temporal` CLI in .tools (built there when missing and Go is at hand, saying so through
 * `log`), or undefined.
 */
export function findTestTemporalCli(log: (line: string) => void = console.log): Promise<string | undefined> {
  return findOrBuildTemporalCli({ env: process.env, toolsDir: PROJECT_TOOLS_DIR, log });
}

/** The workflow bundle, written for the run to share (bundling takes a while: do it once). */
export async function writeTestWorkflowBundle(): Promise<string> {
  const code = await bundleAgentWorkflows();
  const bundlePath = path.join(os.tmpdir(), `durable-agent-workflows-${process.pid}.js`);
  await writeFile(bundlePath, code);
  return bundlePath;
}

/** Tells every test (and their child processes) where the server, the bundle, the CLI and the blobs are. */
export async function exportTestRun(run: {
  address: string;
  bundlePath: string;
  cliPath: string | undefined;
}): Promise<void> {
  process.env.TEST_TEMPORAL_ADDRESS = run.address;
  process.env.TEST_WORKFLOW_BUNDLE = run.bundlePath;
  if (run.cliPath) process.env.TEST_TEMPORAL_CLI = run.cliPath;
  // Every worker and client in the run, child processes included, shares one blob directory.
  process.env.DURABLE_AGENT_BLOB_DIR = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-blobs-'));
}

/** Removes what exportTestRun and writeTestWorkflowBundle made. */
export async function removeTestRunFiles(): Promise<void> {
  if (process.env.TEST_WORKFLOW_BUNDLE) await rm(process.env.TEST_WORKFLOW_BUNDLE, { force: true });
  if (process.env.DURABLE_AGENT_BLOB_DIR)
    await rm(process.env.DURABLE_AGENT_BLOB_DIR, { recursive: true, force: true });
}
