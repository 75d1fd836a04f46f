import { TOOL_ERROR_RETRYABLE, type ToolErrorKind } from '../shared/tool-errors';

/**
 * A tool's answer that something is wrong; the model reads it as an error result. A read-only tool
 * is tried again on a `retryable` one while attempts last (by default the kinds that can be
 * transient: execution failures and timeouts); an error the tool's own logic reported, like an MCP
 * tool's `isError` result, is an answer and is never retried.
 */
export class ToolError extends Error {
  /** Whether a read-only tool's call is tried again after this error. */
  readonly retryable: boolean;

  /**
   * @param kind What went wrong, in the model's terms (`NotFound`, `InvalidArgs`, `ExecutionFailed`, …).
   * @param message What the model reads.
   * @param options `retryable` overrides the kind's default.
   */
  constructor(
    /** What went wrong, in the model's terms. */
    readonly kind: ToolErrorKind,
    message: string,
    options: {
      /** Whether a read-only tool's call is tried again; the kind's default when absent. */
      retryable?: boolean;
    } = {},
  ) {
    super(message);
    this.name = 'ToolError';
    this.retryable = options.retryable ?? TOOL_ERROR_RETRYABLE[kind];
  }
}
