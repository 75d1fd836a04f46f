import type { ConnectionSettings } from '../shared/connection-settings';
import type { ToolSource } from '../tools/tool-source';

export interface ExternalTools {
  sources: ToolSource[];
  /** RAP tool servers' base URLs, for the notices activity. */
  rapToolsets: string[];
  /** Starts what must run beside the worker (the RAP callback server). */
  start(): Promise<void>;
  /** Stops it; the sources themselves are closed with the registry. */
  stop(): Promise<void>;
}

/**
 * The MCP servers, remote A2A agents and RAP toolsets the environment configures. Their modules
 * load only when configured, so a worker without them starts as fast as before.
 */
export async function externalToolsFromEnv(
  env: NodeJS.ProcessEnv,
  settings: ConnectionSettings,
  address: string,
  log: (message: string) => void,
): Promise<ExternalTools> {
  const sources: ToolSource[] = [];
  const configuresMcp = Boolean(env.DURABLE_AGENT_MCP_SERVERS || env.DURABLE_AGENT_MCP_CONFIG);
  if (configuresMcp) {
    const [{ McpToolSource }, { mcpServersFromEnv }] = await Promise.all([
      import('../mcp/mcp-tool-source'),
      import('../mcp/mcp-config-from-env'),
    ]);
    const servers = mcpServersFromEnv(env);
    if (Object.keys(servers).length) sources.push(new McpToolSource(servers));
  }
  if (env.DURABLE_AGENT_A2A_AGENTS || env.DURABLE_AGENT_A2A_AGENTS_FILE) {
    const [{ RemoteA2AToolSource }, { remoteAgentsFromEnv }] = await Promise.all([
      import('../a2a-remote/remote-a2a-tool-source'),
      import('../a2a-remote/remote-agents-config'),
    ]);
    const agents = remoteAgentsFromEnv(env);
    if (agents.length) sources.push(new RemoteA2AToolSource(agents));
  }
  const { rapSettingsFromEnv } = await import('../rap/rap-settings');
  const rap = rapSettingsFromEnv(env);
  if (!rap) return { sources, rapToolsets: [], start: async () => undefined, stop: async () => undefined };

  const [
    { RapToolSource },
    { startRapCallbackServer },
    { Client },
    { connectClient },
    { agentDataConverter },
  ] = await Promise.all([
    import('../rap/rap-tool-source'),
    import('../rap/callback-server'),
    import('@temporalio/client'),
    import('./connect'),
    import('./data-converter'),
  ]);
  sources.push(new RapToolSource(rap));
  let stop = async () => undefined as void;
  return {
    sources,
    rapToolsets: rap.toolsets,
    async start() {
      // RAP tools call back here; the server completes their activities and signals conversations.
      const connection = await connectClient(settings, address);
      const server = await startRapCallbackServer({
        client: new Client({
          connection,
          namespace: settings.namespace,
          dataConverter: agentDataConverter(env),
        }),
        secret: rap.secret,
        host: rap.host,
        port: rap.port,
        log,
      });
      stop = async () => {
        await server.close();
        await connection.close();
      };
    },
    stop: () => stop(),
  };
}
