import type { ToolResultContent } from './content';

/** The error kinds of tool-call-lifecycle.md. Only ExecutionFailed and Timeout may be worth retrying. */
export type ToolErrorKind =
  | 'NotFound'
  | 'InvalidArgs'
  | 'ExecutionFailed'
  | 'PermissionDenied'
  | 'FileNotFound'
  | 'InvalidPath'
  | 'Timeout';

export interface ToolOutcome {
  content: ToolResultContent[];
  details?: unknown;
  isError: boolean;
  /** Interrupted by steer or abort. */
  aborted?: boolean;
}

/** The error envelope of tool-invocation-protocol.md §8.1, as the model reads it. */
export function toolErrorOutcome(tool: string, kind: ToolErrorKind, error: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: JSON.stringify({ status: 'error', tool, error }) }],
    details: { errorKind: kind },
    isError: true,
  };
}

/** A call that was not run because it was refused (tool-invocation-protocol.md §8.2). */
export function toolBlockedOutcome(tool: string, reason: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: JSON.stringify({ status: 'blocked', tool, reason }) }],
    details: { blocked: true },
    isError: true,
  };
}

/** A call interrupted before it returned anything the model could use. */
export function toolAbortedOutcome(tool: string, reason: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: JSON.stringify({ status: 'aborted', tool, reason }) }],
    isError: true,
    aborted: true,
  };
}
