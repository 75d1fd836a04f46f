import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StdioClientTransport,
  type StdioServerParameters,
  getDefaultEnvironment,
} from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpServerConfig } from '../shared/mcp-config';
import { isConnectionFailure } from './mcp-errors';

/** How long a server may take to start and answer `initialize`. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * One MCP server's client, shared by every call on this worker. It connects on first use and
 * again after the transport closed or failed (the server died, or an HTTP server restarted and no
 * longer knows the session); a call in flight when that happens fails, and the next one reconnects.
 */
export class McpConnection {
  private connecting: Promise<Client> | undefined;
  private closed = false;

  constructor(
    readonly serverName: string,
    private readonly config: McpServerConfig,
  ) {}

  client(): Promise<Client> {
    if (this.closed)
      return Promise.reject(new Error(`MCP server ${this.serverName}: the worker is stopping`));
    this.connecting ??= this.connect().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  /**
   * Runs `operation` on the client. A failure of the connection itself (not an error the server
   * answered with, nor a timeout or an abort) drops the client, so the next operation reconnects.
   * A `repeatable` operation (one safe to send twice, like `tools/list`) is then tried once more on
   * a new connection, so a server that restarted since the last use is not reported as failing.
   */
  async use<T>(
    operation: (client: Client) => Promise<T>,
    options: { signal?: AbortSignal; repeatable?: boolean } = {},
  ): Promise<T> {
    const client = await this.client();
    try {
      return await operation(client);
    } catch (error) {
      if (options.signal?.aborted || !isConnectionFailure(error)) throw error;
      this.forget(client);
      if (!options.repeatable) throw error;
    }
    return this.use(operation, { ...options, repeatable: false });
  }

  /** The stdio server's process id, while connected. */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const connecting = this.connecting;
    this.connecting = undefined;
    await connecting?.then((client) => client.close()).catch(() => undefined);
  }

  private transport: StdioClientTransport | StreamableHTTPClientTransport | undefined;
  private current: Client | undefined;

  private forget(client: Client): void {
    if (this.current !== client) return;
    this.current = undefined;
    this.transport = undefined;
    this.connecting = undefined;
    void client.close().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    const transport =
      'command' in this.config
        ? new StdioClientTransport(stdioServerParameters(this.config))
        : new StreamableHTTPClientTransport(new URL(this.config.url), {
            requestInit: { headers: this.config.headers ?? {} },
          });
    const client = new Client({ name: 'durable-agent', version: '0.1.0' });
    client.onclose = () => {
      // Only the connection that closed is forgotten; a newer one stays.
      if (this.transport === transport) {
        this.current = undefined;
        this.transport = undefined;
        this.connecting = undefined;
      }
    };
    this.transport = transport;
    this.current = client;
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      this.transport = undefined;
      this.current = undefined;
      await client.close().catch(() => undefined);
      throw new Error(`MCP server ${this.serverName} did not start: ${(error as Error).message}`);
    }
    return client;
  }
}

/**
 * How a stdio server is started. Its environment is the SDK's minimal default (search path, home,
 * shell, terminal, user) plus the variables its configuration names, never the worker's: a server
 * runs code the worker did not write, and tools the model calls.
 */
export function stdioServerParameters(
  config: Extract<McpServerConfig, { command: string }>,
): StdioServerParameters {
  return {
    command: config.command,
    args: config.args ?? [],
    env: { ...getDefaultEnvironment(), ...config.env },
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'ignore',
  };
}
