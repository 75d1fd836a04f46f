import type { ToolResultContent } from './content';

/** What went wrong with a tool call, as the model reads it: each kind says whether trying again can help. */
export type ToolErrorKind =
  | 'NotFound'
  | 'InvalidArgs'
  | 'ExecutionFailed'
  | 'PermissionDenied'
  | 'FileNotFound'
  | 'InvalidPath'
  | 'Timeout'
  /** The tool failed too often on this worker and is disabled for a while (its circuit breaker is open). */
  | 'Unavailable';

/**
 * Whether the same call may succeed if tried again. Only for read-only tools: a tool with side
 * effects runs once whatever its error says. A missing tool or file, bad
 * arguments, a refused path or permission give the same answer every time; a failure or a timeout
 * may not (a flaky server, a slow disk).
 */
export const TOOL_ERROR_RETRYABLE: Readonly<Record<ToolErrorKind, boolean>> = {
  NotFound: false,
  InvalidArgs: false,
  ExecutionFailed: true,
  PermissionDenied: false,
  FileNotFound: false,
  InvalidPath: false,
  Timeout: true,
  Unavailable: false,
};

/**
 * The failure type of a payload the blob store would not take. For a tool's result it means the tool
 * ran and its result was lost on the way to history.
 */
export const PAYLOAD_STORE_UNAVAILABLE = 'PayloadStoreUnavailable';

export interface ToolOutcome {
  content: ToolResultContent[];
  details?: unknown;
  isError: boolean;
  /** Interrupted by steer or abort. */
  aborted?: boolean;
}

/** The error envelope the model reads: `{"status":"error","tool":…,"error":…}`. */
export function toolErrorOutcome(tool: string, kind: ToolErrorKind, error: string): ToolOutcome {
  return {
    content: [{ type: 'text', text: JSON.stringify({ status: 'error', tool, error }) }],
    details: { errorKind: kind },
    isError: true,
  };
}

/** A call that was not run because it was refused: `{"status":"blocked","tool":…,"reason":…}`. */
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
