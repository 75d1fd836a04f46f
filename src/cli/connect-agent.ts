import { Client } from '@temporalio/client';
import type { ConnectionSettings } from '../shared/connection-settings';
import { connectionSettingsFromEnv } from '../client/connection-settings-from-env';
import { AgentClient } from '../client/agent-client';
import { type Cleanups, log } from './cleanups';
import { ensureServer, findRunningServer, processTracing } from './local-services';

export interface ConnectedAgent {
  agent: AgentClient;
  /** The Temporal client under `agent`, with the agent's data converter. */
  client: Client;
  settings: ConnectionSettings;
  address: string;
}

/**
 * An AgentClient on the task queue and server the environment names. `startServer` lets the
 * embedded server be started when none is running (a message sent then waits in it for a worker);
 * commands that only look at or act on conversations need a server already running.
 */
export async function connectAgent(
  cleanups: Cleanups,
  { startServer }: { startServer: boolean },
): Promise<ConnectedAgent> {
  const settings = connectionSettingsFromEnv(process.env, log);
  const address = startServer ? await ensureServer(settings, cleanups) : await findRunningServer(settings);
  const { connectClient } = await import('../worker/connect');
  const { agentDataConverter } = await import('../worker/data-converter');
  const connection = await connectClient(settings, address, log);
  cleanups.last(() => connection.close());
  const tracing = await processTracing(cleanups);
  const client = new Client({
    connection,
    namespace: settings.namespace,
    dataConverter: agentDataConverter(),
    ...(tracing
      ? {
          interceptors: {
            workflow: await (await import('../worker/tracing')).tracingClientInterceptors(),
          },
        }
      : {}),
  });
  const agent = new AgentClient(client, settings.taskQueue);
  return { agent, client, settings, address };
}
