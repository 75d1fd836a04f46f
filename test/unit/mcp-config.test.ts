import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mcpServersFromEnv } from '../../src/mcp/mcp-config-from-env';
import { toolResultOfMcp } from '../../src/mcp/mcp-result';
import { ToolError } from '../../src/tools/tool-error';

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

describe('toolResultOfMcp', () => {
  test('keeps text and images, describes resources, and keeps structured content as details', () => {
    const result = toolResultOfMcp({
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'inside' } },
        { type: 'resource_link', uri: 'file:///b', name: 'b' },
      ],
      structuredContent: { n: 1 },
    });
    expect(result.content).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'text', text: 'inside' },
      { type: 'text', text: '[resource link file:///b (b)]' },
    ]);
    expect(result.details).toEqual({ structuredContent: { n: 1 } });
  });

  test('an error result is the tool error the model reads', () => {
    expect(() =>
      toolResultOfMcp({ isError: true, content: [{ type: 'text', text: 'no such file' }] }),
    ).toThrow(new ToolError('ExecutionFailed', 'no such file'));
  });
});
