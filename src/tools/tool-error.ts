import { TOOL_ERROR_RETRYABLE, type ToolErrorKind } from '../shared/tool-errors';

/**
 * A tool's answer that something is wrong; the model reads it as an error result. A read-only tool
 * is tried again on a `retryable` one while attempts last (by default the kinds that can be
 * transient: execution failures and timeouts); an error the tool's own logic reported, like an MCP
 * tool's `isError` result, is an answer and is never retried.
 */
export class ToolError extends Error {
  readonly retryable: boolean;

  constructor(
    readonly kind: ToolErrorKind,
    message: string,
    options: { retryable?: boolean } = {},
  ) {
    super(message);
    this.name = 'ToolError';
    this.retryable = options.retryable ?? TOOL_ERROR_RETRYABLE[kind];
  }
}
