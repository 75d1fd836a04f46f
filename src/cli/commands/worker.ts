import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectionSettingsFromEnv } from '../../client/connection-settings-from-env';
import { type Cleanups, log } from '../cleanups';
import { ensureServer, noModelConfigured, startLocalWorker } from '../local-services';

/** `worker`: serve the task queue until stopped. */
export async function workerCommand(args: string[], cleanups: Cleanups): Promise<number> {
  // --metrics-port is read when the runtime is installed, before this.
  const { values } = parseArgs({
    args,
    options: { workspace: { type: 'string' }, 'metrics-port': { type: 'string' } },
  });
  if (await noModelConfigured()) return 2;
  const settings = connectionSettingsFromEnv(process.env, log);
  const address = await ensureServer(settings, cleanups);
  const workspace = path.resolve(values.workspace ?? process.env.DURABLE_AGENT_WORKSPACE ?? process.cwd());
  const worker = await startLocalWorker({ settings, address, workspace }, cleanups);
  log(`worker on task queue ${settings.taskQueue} at ${address}, workspace ${workspace}; Ctrl-C stops it`);
  await worker.done;
  return 0;
}
