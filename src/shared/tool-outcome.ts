import { z } from 'zod';
import type { ToolResultContent } from './content';
import { type ToolErrorKind, ToolErrorKindSchema } from './tool-errors';

/**
 * Every tool outcome is made here, and every reader goes by its fields, never by its text. The text
 * (`content`) is what the model reads, made from the fields for every outcome the runtime writes
 * itself: `{"status":"error","tool":…,"error":…}`, `{"status":"blocked","tool":…,"reason":…}`,
 * `{"status":"aborted","tool":…,"reason":…}`. Recorded histories replay that text, so it never
 * changes; the fields may grow.
 */

/**
 * `ok`: the tool answered. `error`: the call failed (`errorKind` says how). `blocked`: it was
 * refused before it ran (`blockedBy` says by what). `aborted`: a steer or abort interrupted it
 * (`partial` when what it had returned so far was kept for the model).
 */
export const ToolOutcomeStatusSchema = z.enum(['ok', 'error', 'blocked', 'aborted']);
export type ToolOutcomeStatus = z.infer<typeof ToolOutcomeStatusSchema>;

/**
 * Who or what refused a blocked call: `approval` a person (now, or always earlier), `approval_timeout`
 * nobody in time, `hook` a before_tool_call hook. An unknown or owner-only tool, bad arguments and an
 * open circuit breaker are not blocks: the model reads them as errors (NotFound, PermissionDenied,
 * InvalidArgs, Unavailable), so their status says `error`.
 */
export const ToolBlockerSchema = z.enum(['approval', 'approval_timeout', 'hook', 'budget']);
export type ToolBlocker = z.infer<typeof ToolBlockerSchema>;

/** An outcome's fields besides what the model reads; each is absent where it does not apply. */
export const ToolOutcomeFieldsSchema = z.object({
  /** How the call ended: `ok`, `error`, `blocked` or `aborted`. */
  status: ToolOutcomeStatusSchema,
  /** `error`: what went wrong (absent only in an error recorded before outcomes had fields, its details rewritten by a hook). */
  errorKind: ToolErrorKindSchema.optional(),
  /** `blocked`: who or what refused it (absent in outcomes recorded before outcomes had fields). */
  blockedBy: ToolBlockerSchema.optional(),
  /**
   * `blocked` and `aborted`: why, as the model reads it. An error's message stays in `content` only:
   * it can be long, and a tool_result_persist hook may rewrite it.
   */
  reason: z.string().optional(),
  /** An `Unavailable` error of a tool whose circuit breaker is open: when it lets a call through again (ISO time). */
  retryAt: z.string().optional(),
  /** `aborted` after the tool had returned something: that output was kept, marked as partial. */
  partial: z.literal(true).optional(),
});
export type ToolOutcomeFields = z.infer<typeof ToolOutcomeFieldsSchema>;

/** What became of one tool call: the model's text and the fields readers go by. */
export interface ToolOutcome extends ToolOutcomeFields {
  /** What the model reads. */
  content: ToolResultContent[];
  /** For user interfaces and logs, never read by the model. */
  details?: unknown;
  /** The model reads this result as an error: every status but `ok`, and `aborted` with nothing kept. */
  isError: boolean;
  /** Interrupted by steer or abort. */
  aborted?: boolean;
}

/**
 * An outcome as it was stored (a transcript message, an event, an activity result in a history):
 * with its fields, or from before they existed.
 */
export interface StoredToolOutcome extends Partial<ToolOutcomeFields> {
  isError: boolean;
  aborted?: boolean;
  details?: unknown;
}

/** The tool's own result, as the model reads it. */
export function okOutcome(result: { content: ToolResultContent[]; details?: unknown }): ToolOutcome {
  return { ...result, isError: false, status: 'ok' };
}

/**
 * An error the model reads: `{"status":"error","tool":…,"error":…}`. `message` goes in as it is:
 * bound and clean it first where it may be long or come from outside (see finish-tool-result.ts).
 */
export function errorOutcome(tool: string, kind: ToolErrorKind, message: string): ToolOutcome {
  return {
    content: [envelope({ status: 'error', tool, error: message })],
    details: { errorKind: kind },
    isError: true,
    status: 'error',
    errorKind: kind,
  };
}

/** What the model reads while a tool's circuit is open on this worker: which tool, why, and when to try again. */
export function circuitOpenOutcome(
  tool: string,
  refused: { retryAt: string; nowMs: number; failures: number; lastFailure: string },
): ToolOutcome {
  const seconds = Math.max(1, Math.ceil((Date.parse(refused.retryAt) - refused.nowMs) / 1_000));
  const message =
    `${tool} is temporarily disabled on this worker until ${refused.retryAt} (in ${seconds} s) after ` +
    `${refused.failures} failures in a row (last: ${refused.lastFailure}); retry after that, or do without it`;
  return {
    ...errorOutcome(tool, 'Unavailable', message),
    details: { errorKind: 'Unavailable', circuit: { state: 'open', retryAt: refused.retryAt } },
    retryAt: refused.retryAt,
  };
}

/** A call refused before it ran: `{"status":"blocked","tool":…,"reason":…}`. */
export function blockedOutcome(tool: string, blockedBy: ToolBlocker, reason: string): ToolOutcome {
  return {
    content: [envelope({ status: 'blocked', tool, reason })],
    details: { blocked: true },
    isError: true,
    status: 'blocked',
    blockedBy,
    reason,
  };
}

/** A call interrupted before it returned anything the model could use: `{"status":"aborted","tool":…,"reason":…}`. */
export function abortedOutcome(tool: string, reason: string): ToolOutcome {
  return {
    content: [envelope({ status: 'aborted', tool, reason })],
    isError: true,
    aborted: true,
    status: 'aborted',
    reason,
  };
}

/** A call interrupted after its tool had returned `result`, which the model reads (marked as partial by the caller). */
export function partialOutcome(result: { content: ToolResultContent[]; details?: unknown }): ToolOutcome {
  return { ...result, isError: false, aborted: true, status: 'aborted', partial: true };
}

/**
 * The fields of a stored outcome. One recorded before outcomes had fields gets them from `isError`,
 * `aborted` and `details` (`errorKind`, `blocked`, `circuit`), never from its text; who blocked it
 * is then unknown.
 */
export function outcomeFieldsOf(stored: StoredToolOutcome): ToolOutcomeFields {
  if (stored.status !== undefined) {
    const { status, errorKind, blockedBy, reason, retryAt, partial } = stored;
    return {
      status,
      ...(errorKind !== undefined ? { errorKind } : {}),
      ...(blockedBy !== undefined ? { blockedBy } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(retryAt !== undefined ? { retryAt } : {}),
      ...(partial ? { partial } : {}),
    };
  }
  if (stored.aborted) return { status: 'aborted', ...(stored.isError ? {} : { partial: true }) };
  if (!stored.isError) return { status: 'ok' };
  const details = isRecord(stored.details) ? stored.details : {};
  if (details.blocked === true) return { status: 'blocked' };
  const kind = ToolErrorKindSchema.safeParse(details.errorKind);
  const circuit = isRecord(details.circuit) ? details.circuit : {};
  return {
    status: 'error',
    ...(kind.success ? { errorKind: kind.data } : {}),
    ...(typeof circuit.retryAt === 'string' ? { retryAt: circuit.retryAt } : {}),
  };
}

/** The outcome with its fields, whenever and by whichever worker it was made. */
export function withOutcomeFields<T extends StoredToolOutcome>(stored: T): T & ToolOutcomeFields {
  return { ...stored, ...outcomeFieldsOf(stored) };
}

/**
 * The fields of a stored value of unknown shape (a history's payload): those that parse, the rest
 * derived as for an outcome recorded before fields existed. Undefined when it is no outcome at all.
 */
export function readOutcomeFields(value: unknown): ToolOutcomeFields | undefined {
  if (!isRecord(value) || typeof value.isError !== 'boolean') return undefined;
  const fields = ToolOutcomeFieldsSchema.safeParse(value);
  return outcomeFieldsOf({
    isError: value.isError,
    ...(value.aborted === true ? { aborted: true } : {}),
    details: value.details,
    ...(fields.success ? fields.data : {}),
  });
}

function envelope(body: { status: ToolOutcomeStatus; tool: string; error?: string; reason?: string }) {
  return { type: 'text' as const, text: JSON.stringify(body) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
