import type { McpServerConfig } from '../shared/mcp-config';
import type { ToolDiscovery, ToolSource } from '../tools/tool-source';
import { McpToolSource } from './mcp-tool-source';

/**
 * MCP servers that arrive while the worker runs (an editor names them when it opens a session),
 * offered like configured ones (`{server}__{tool}`) from the next discovery on. A server added
 * again with the same configuration is the same server; another configuration under a taken name
 * gets a name of its own.
 */
export class McpServerSet implements ToolSource {
  readonly name = 'mcp (added while running)';
  private readonly servers = new Map<string, { config: string; source: McpToolSource }>();

  /** Adds the servers not there yet; returns the name each is offered under. */
  add(servers: Record<string, McpServerConfig>): string[] {
    return Object.entries(servers).map(([name, config]) => {
      const key = JSON.stringify(config);
      for (let index = 1; ; index++) {
        const candidate = index === 1 ? name : `${name}-${index}`;
        const existing = this.servers.get(candidate);
        if (existing?.config === key) return candidate;
        if (existing) continue;
        this.servers.set(candidate, { config: key, source: new McpToolSource({ [candidate]: config }) });
        return candidate;
      }
    });
  }

  async discover(): Promise<ToolDiscovery> {
    const found = await Promise.all([...this.servers.values()].map(({ source }) => source.discover()));
    return {
      tools: found.flatMap((entry) => entry.tools),
      warnings: found.flatMap((entry) => entry.warnings),
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map(({ source }) => source.close()));
  }
}
