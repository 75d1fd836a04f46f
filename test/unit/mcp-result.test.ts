import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { callFailure, isConnectionFailure } from '../../src/mcp/mcp-errors';
import { toolResultOfMcp, updateOfProgress } from '../../src/mcp/mcp-result';
import { ToolError } from '../../src/tools/tool-error';

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

describe('updateOfProgress', () => {
  test('a progress notification is a text update with the numbers in details', () => {
    expect(updateOfProgress({ progress: 3, total: 10, message: 'copying' })).toEqual({
      content: [{ type: 'text', text: 'progress 3/10: copying' }],
      details: { progress: 3, total: 10 },
    });
    expect(updateOfProgress({ progress: 0.5 })).toEqual({
      content: [{ type: 'text', text: 'progress 0.5' }],
      details: { progress: 0.5 },
    });
  });
});

describe('callFailure', () => {
  test('a lost connection is a failure of the call, which drops the connection', () => {
    const lost = [
      new McpError(ErrorCode.ConnectionClosed, 'Connection closed'),
      new TypeError('fetch failed'),
      new StreamableHTTPError(400, 'Bad Request: No valid session ID provided'),
    ];
    for (const error of lost) {
      expect(isConnectionFailure(error)).toBe(true);
      const failure = callFailure(error, 'fs', 'read_file');
      expect(failure).not.toBeInstanceOf(ToolError);
      expect(failure.message).toMatch(
        /^MCP server fs was unreachable or closed the connection during read_file: /,
      );
    }
  });

  test("the server's own error answers are the tool's errors, and keep the connection", () => {
    const invalid = new McpError(ErrorCode.InvalidParams, 'path is required');
    expect(isConnectionFailure(invalid)).toBe(false);
    expect(callFailure(invalid, 'fs', 'read_file')).toEqual(
      new ToolError('InvalidArgs', 'MCP server fs refused read_file: MCP error -32602: path is required'),
    );
    expect(callFailure(new McpError(ErrorCode.InternalError, 'boom'), 'fs', 'read_file')).toMatchObject({
      kind: 'ExecutionFailed',
    });
    const timeout = new McpError(ErrorCode.RequestTimeout, 'Request timed out');
    expect(isConnectionFailure(timeout)).toBe(false);
    expect(callFailure(timeout, 'fs', 'read_file')).toMatchObject({ kind: 'Timeout' });
  });
});
