import type { RunningServer } from '../../src/temporal-server/dev-server';
import { removeTestRunFiles } from './test-run';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__durableAgentTestServer as
    RunningServer | undefined;
  await server?.stop();
  await removeTestRunFiles();
}
