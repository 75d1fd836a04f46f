import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectionSettingsFromEnv } from '../../client/connection-settings-from-env';
import { type Cleanups, log } from '../cleanups';
import { ensureServer, noModelConfigured, startLocalWorker } from '../local-services';
import { UsageError } from '../usage-error';
import type { HealthEndpointAddress } from '../../worker/health-endpoint';

/** `worker`: serve the task queue until stopped. */
export async function workerCommand(args: string[], cleanups: Cleanups): Promise<number> {
  // --metrics-port is read when the runtime is installed, before this.
  const { values } = parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      'metrics-port': { type: 'string' },
      'health-port': { type: 'string' },
    },
  });
  const { healthEndpointFrom, startHealthEndpoint } = await import('../../worker/health-endpoint');
  let healthAddress: HealthEndpointAddress | undefined;
  try {
    healthAddress = healthEndpointFrom(values['health-port'], process.env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (await noModelConfigured()) return 2;
  // Probes are answered from the start: live at once, ready once the worker polls.
  let polling = () => false;
  if (healthAddress) {
    const health = await startHealthEndpoint(healthAddress, () => polling());
    cleanups.last(health.close);
    log(`probes on http://${healthAddress.host}:${health.port}/healthz and /ready`);
  }
  const settings = connectionSettingsFromEnv(process.env, log);
  const address = await ensureServer(settings, cleanups);
  const workspace = path.resolve(values.workspace ?? process.env.DURABLE_AGENT_WORKSPACE ?? process.cwd());
  const worker = await startLocalWorker({ settings, address, workspace }, cleanups);
  polling = worker.polling;
  log(`worker on task queue ${settings.taskQueue} at ${address}, workspace ${workspace}; Ctrl-C stops it`);
  await worker.done;
  return 0;
}
