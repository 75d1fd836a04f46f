import { z } from 'zod';
import type { RiskLevel } from '../shared/approvals';
import type { McpServersConfig } from '../shared/mcp-config';
import { type AgentTool, type ToolUpdate } from '../tools/tool';
import type { ToolDiscovery, ToolSource } from '../tools/tool-source';
import { McpConnection } from './mcp-connection';
import { callFailure } from './mcp-errors';
import { type McpCallResult, toolResultOfMcp, updateOfProgress } from './mcp-result';

/** What `tools/list` says of a tool (only the fields read here). */
interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    title?: string;
  };
}

const ANY_OBJECT = z.record(z.string(), z.unknown());
/** The `mcp` category's timeout (category-defaults.ts), for servers that set none. */
const DEFAULT_CALL_TIMEOUT_MS = 120_000;

/**
 * The tools of the configured MCP servers, named
 * `{server}__{tool}`, over one pooled connection per server. A server that fails to start or to
 * list its tools is a warning; the others' tools stay usable.
 */
export class McpToolSource implements ToolSource {
  /** Always `mcp`. */
  readonly name = 'mcp';
  private readonly connections: Map<string, McpConnection>;

  /** @param servers The MCP servers by name, as in the worker's MCP configuration; none is started until `discover`. */
  constructor(private readonly servers: McpServersConfig) {
    this.connections = new Map(
      Object.keys(servers).map((name) => [name, new McpConnection(name, servers[name]!)]),
    );
  }

  /**
   * The connection to `server`, for inspection (tests kill a stdio server through its pid).
   *
   * @internal
   */
  connection(server: string): McpConnection | undefined {
    return this.connections.get(server);
  }

  /** Lists every server's tools, connecting as needed; a server that fails is a warning. */
  async discover(): Promise<ToolDiscovery> {
    const listed = await Promise.all(
      [...this.connections.values()].map(async (connection) => {
        try {
          const tools = await connection.use(
            async (client) => {
              const found: McpToolInfo[] = [];
              let cursor: string | undefined;
              do {
                const page = await client.listTools(cursor ? { cursor } : {});
                found.push(...(page.tools as McpToolInfo[]));
                cursor = page.nextCursor;
              } while (cursor);
              return found;
            },
            { repeatable: true },
          );
          return { tools: tools.map((tool) => this.agentToolOf(connection, tool)), warnings: [] };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return { tools: [], warnings: [`MCP server ${connection.serverName} offers no tools: ${message}`] };
        }
      }),
    );
    return {
      tools: listed.flatMap((entry) => entry.tools),
      warnings: listed.flatMap((entry) => entry.warnings),
    };
  }

  /** Closes every server's connection (stopping stdio servers). */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private agentToolOf(connection: McpConnection, info: McpToolInfo): AgentTool {
    const server = connection.serverName;
    const timeoutMs = this.servers[server]!.timeoutMs;
    const readOnly = info.annotations?.readOnlyHint === true;
    const risk: RiskLevel = readOnly
      ? 'low'
      : info.annotations?.destructiveHint === false
        ? 'medium'
        : 'high';
    return {
      name: `${server}__${info.name}`,
      label: info.title ?? info.annotations?.title ?? info.name,
      description: info.description ?? `${info.name} from MCP server ${server}`,
      parameters: ANY_OBJECT,
      inputJsonSchema: info.inputSchema,
      category: 'mcp',
      idempotent: readOnly,
      risk,
      ...(timeoutMs !== undefined ? { startToCloseTimeoutMs: timeoutMs } : {}),
      // Arguments follow the server's schema, which the server checks itself.
      verbatimParameters: Object.keys((info.inputSchema.properties as Record<string, unknown>) ?? {}),
      async execute(_toolCallId, params, signal, onUpdate: (update: ToolUpdate) => void) {
        const result = await connection
          .use(
            (client) =>
              client.callTool({ name: info.name, arguments: params as Record<string, unknown> }, undefined, {
                signal,
                timeout: timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
                // Progress proves the server is working, so it extends the request like it extends the activity.
                resetTimeoutOnProgress: true,
                onprogress: (progress) => onUpdate(updateOfProgress(progress)),
              }),
            { signal },
          )
          .catch((error: unknown) => {
            throw signal.aborted ? error : callFailure(error, server, info.name);
          });
        return toolResultOfMcp(result as McpCallResult);
      },
    };
  }
}
