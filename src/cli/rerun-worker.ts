import { randomUUID } from 'node:crypto';
import { AgentClient } from '../client/agent-client';
import type { Cleanups } from './cleanups';
import { type ConnectedAgent, connectAgent } from './connect-agent';
import { noModelConfigured, startLocalWorker } from './local-services';

/** A connection for `rerun` and `eval`, and the worker they rerun on once they know where it works. */
export interface RerunConnection extends ConnectedAgent {
  /**
   * The client that reruns: with a worker of their own, on its task queue, that worker started now
   * with `workspace` as its own; else the connection as it is.
   */
  serve(workspace: string): Promise<ConnectedAgent>;
}

/**
 * The client `rerun` and `eval` use: with `startWorker`, a worker in this process on a task queue
 * of its own, so no other worker takes the reruns and this one takes nothing else while it accepts
 * carried state (forks of exported histories) and calls `baseUrl`. The worker starts with `serve`,
 * once the caller has read where the original worked. Undefined, after saying how to configure
 * one, when no model is configured for that worker.
 */
export async function connectRerunAgent(
  cleanups: Cleanups,
  { startWorker, baseUrl }: { startWorker: boolean; baseUrl?: string },
): Promise<RerunConnection | undefined> {
  const taskQueue = `rerun-${randomUUID()}`;
  const workerEnv = {
    ...process.env,
    AGENT_TASK_QUEUE: taskQueue,
    AGENT_ACCEPT_CARRIED: 'all',
    ...(baseUrl !== undefined ? { OPENAI_BASE_URL: baseUrl } : {}),
  };
  if (startWorker && (await noModelConfigured(workerEnv))) return undefined;
  const connected = await connectAgent(cleanups, { startServer: startWorker });
  return {
    ...connected,
    async serve(workspace) {
      if (!startWorker) return connected;
      const settings = { ...connected.settings, taskQueue };
      await startLocalWorker({ settings, address: connected.address, workspace, env: workerEnv }, cleanups);
      return { ...connected, settings, agent: new AgentClient(connected.client, taskQueue) };
    },
  };
}
