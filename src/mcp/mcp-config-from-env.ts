import { readFileSync } from 'node:fs';
import { schemaProblems } from '../shared/schema-problems';
import { type McpServersConfig, McpServersConfigSchema } from '../shared/mcp-config';

/**
 * The MCP servers of `DURABLE_AGENT_MCP_SERVERS` (the JSON itself) or `DURABLE_AGENT_MCP_CONFIG`
 * (a file holding it): `{ "name": { "command", "args"?, "env"?, "cwd"?, "timeoutMs"? } | { "url",
 * "headers"?, "timeoutMs"? } }`. None when neither is set; a bad value (an unknown key too) is an
 * error naming it.
 */
export function mcpServersFromEnv(env: NodeJS.ProcessEnv): McpServersConfig {
  const inline = env.DURABLE_AGENT_MCP_SERVERS;
  const file = env.DURABLE_AGENT_MCP_CONFIG;
  if (inline && file) throw new Error('set DURABLE_AGENT_MCP_SERVERS or DURABLE_AGENT_MCP_CONFIG, not both');
  const [name, text] = inline
    ? ['DURABLE_AGENT_MCP_SERVERS', inline]
    : file
      ? [`DURABLE_AGENT_MCP_CONFIG (${file})`, readFileSync(file, 'utf8')]
      : [undefined, undefined];
  if (!name) return {};
  let json: unknown;
  try {
    json = JSON.parse(text!);
  } catch (error) {
    throw new Error(`${name} is not JSON: ${(error as Error).message}`);
  }
  const parsed = McpServersConfigSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(`${name} is not a valid MCP server list: ${schemaProblems(parsed.error)}`);
  return parsed.data;
}
