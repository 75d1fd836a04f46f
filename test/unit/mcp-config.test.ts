import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mcpServersFromEnv } from '../../src/mcp/mcp-config-from-env';

describe('mcpServersFromEnv', () => {
  test('reads servers by command or URL from the variable or from a file', () => {
    const servers = {
      fs: { command: 'npx', args: ['server'] },
      remote: { url: 'http://127.0.0.1:3000/mcp', timeoutMs: 5000 },
    };
    expect(mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: JSON.stringify(servers) })).toEqual(servers);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'mcp-')), 'servers.json');
    writeFileSync(file, JSON.stringify(servers));
    expect(mcpServersFromEnv({ DURABLE_AGENT_MCP_CONFIG: file })).toEqual(servers);
    expect(mcpServersFromEnv({})).toEqual({});
  });

  test('refuses what it cannot use, naming the variable', () => {
    expect(() => mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: '{' })).toThrow(
      /DURABLE_AGENT_MCP_SERVERS is not JSON/,
    );
    expect(() => mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: '{"a__b":{"command":"x"}}' })).toThrow(
      /not a valid MCP server list/,
    );
    expect(() => mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: '{"a":{}}' })).toThrow(
      /not a valid MCP server list/,
    );
    expect(() =>
      mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: '{}', DURABLE_AGENT_MCP_CONFIG: 'x' }),
    ).toThrow(/not both/);
  });
});
