import { rm } from 'node:fs/promises';
import type { RunningServer } from '../../src/worker/dev-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__durableAgentTestServer as
    RunningServer | undefined;
  await server?.stop();
  if (process.env.TEST_WORKFLOW_BUNDLE) await rm(process.env.TEST_WORKFLOW_BUNDLE, { force: true });
  if (process.env.DURABLE_AGENT_BLOB_DIR)
    await rm(process.env.DURABLE_AGENT_BLOB_DIR, { recursive: true, force: true });
}
