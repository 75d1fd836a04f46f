import type { ToolErrorKind } from '../shared/tool-errors';

/** A tool's definite answer that something is wrong; the model reads it as an error result. Never retried. */
export class ToolError extends Error {
  constructor(
    readonly kind: ToolErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}
