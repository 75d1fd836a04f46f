import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../tools/tool-error';

/**
 * Whether `error` says the connection is unusable (the server died, the network failed, an HTTP
 * server no longer knows the session) rather than being the server's answer or a timeout.
 */
export function isConnectionFailure(error: unknown): boolean {
  return !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed;
}

/**
 * What a failed `tools/call` becomes. An error the server answered with is the tool's error, read
 * by the model (bad arguments are not tried again); a lost connection or a timeout is a failure
 * of the call, tried again only for read-only tools.
 */
export function callFailure(error: unknown, server: string, tool: string): Error {
  const message = error instanceof Error ? error.message : String(error);
  if (isConnectionFailure(error)) {
    return new Error(
      `MCP server ${server} was unreachable or closed the connection during ${tool}: ${message}`,
    );
  }
  const code = (error as McpError).code;
  if (code === ErrorCode.RequestTimeout) {
    return new ToolError('Timeout', `MCP server ${server} did not answer ${tool} in time: ${message}`);
  }
  return new ToolError(
    code === ErrorCode.InvalidParams ? 'InvalidArgs' : 'ExecutionFailed',
    `MCP server ${server} refused ${tool}: ${message}`,
  );
}
