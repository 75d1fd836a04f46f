import { z } from 'zod';

/**
 * What went wrong with a tool call, as the model reads it: each kind says whether trying again can
 * help. `Unavailable`: the tool cannot be reached now (its circuit breaker is open on this worker,
 * the worker holding its process is gone, its result was lost on the way to history).
 */
export const ToolErrorKindSchema = z.enum([
  'NotFound',
  'InvalidArgs',
  'ExecutionFailed',
  'PermissionDenied',
  'FileNotFound',
  'InvalidPath',
  'Timeout',
  'Unavailable',
]);
export type ToolErrorKind = z.infer<typeof ToolErrorKindSchema>;

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

/** Error kinds that say something is wrong with the tool itself rather than with the call the model made. */
export const TOOL_FAULT_KINDS: ReadonlySet<ToolErrorKind> = new Set<ToolErrorKind>([
  'ExecutionFailed',
  'Timeout',
]);

/**
 * The failure type of a payload the blob store would not take. For a tool's result it means the tool
 * ran and its result was lost on the way to history.
 */
export const PAYLOAD_STORE_UNAVAILABLE = 'PayloadStoreUnavailable';
