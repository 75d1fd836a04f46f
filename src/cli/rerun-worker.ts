import { randomUUID } from 'node:crypto';
import { AgentClient } from '../client/agent-client';
import type { Cleanups } from './cleanups';
import { type ConnectedAgent, connectAgent } from './connect-agent';
import { noModelConfigured, startLocalWorker } from './local-services';

/**
 * The client `rerun` and `eval` use: with `startWorker`, a worker in this process on a task queue
 * of its own, so no other worker takes the reruns and this one takes nothing else while it accepts
 * carried state (forks of exported histories) and calls `baseUrl`. Undefined, after saying how to
 * configure one, when no model is configured for that worker.
 */
export async function connectRerunAgent(
  cleanups: Cleanups,
  { startWorker, baseUrl, workspace }: { startWorker: boolean; baseUrl?: string; workspace?: string },
): Promise<ConnectedAgent | undefined> {
  const taskQueue = `rerun-${randomUUID()}`;
  const workerEnv = {
    ...process.env,
    AGENT_TASK_QUEUE: taskQueue,
    AGENT_ACCEPT_CARRIED: 'all',
    ...(baseUrl !== undefined ? { OPENAI_BASE_URL: baseUrl } : {}),
  };
  if (startWorker && (await noModelConfigured(workerEnv))) return undefined;
  const connected = await connectAgent(cleanups, { startServer: startWorker });
  if (!startWorker) return connected;
  const settings = { ...connected.settings, taskQueue };
  await startLocalWorker(settings, connected.address, workspace ?? process.cwd(), cleanups, workerEnv);
  return { ...connected, settings, agent: new AgentClient(connected.client, taskQueue) };
}
