import { ApplicationFailure } from '@temporalio/activity';
import type { ModelWire, WireFailure } from './model-wire';

/** Statuses that will not change on a retry: the request itself is wrong or not allowed. */
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/** Reads an error of a wire's client: its `failureOf`. */
type FailureReader = ModelWire['failureOf'];

/**
 * Temporal does the retrying (the clients' own retries are off), so each failure is classified
 * here, whichever API it came through: a status that will not change is not retried, any other
 * (5xx, 429, Anthropic's 529) is, after what its Retry-After asked; so are an unreachable endpoint
 * and a transient error event. An error the wire does not know is returned unchanged.
 */
export function classifyModelError(error: unknown, failureOf: FailureReader): unknown {
  const failure = failureOf(error);
  switch (failure?.kind) {
    case undefined:
      return error;
    case 'status': {
      const detail = `the model endpoint answered ${failure.status}: ${failure.message}`;
      if (NON_RETRYABLE_STATUSES.has(failure.status)) {
        return ApplicationFailure.nonRetryable(detail, 'ModelRequestRejected', { status: failure.status });
      }
      const retryAfterMs = retryAfterOf(failure.headers, Date.now());
      return ApplicationFailure.create({
        message: detail,
        type: 'ModelUnavailable',
        details: [{ status: failure.status }],
        // The endpoint said when to come back (429, 503): the next attempt waits that long, not the backoff.
        ...(retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
      });
    }
    case 'unreachable':
      return ApplicationFailure.retryable(
        `could not reach the model endpoint: ${failure.message}`,
        'ModelUnavailable',
      );
    case 'transient':
      return ApplicationFailure.create({
        message: `the model endpoint sent an error in its stream: ${failure.message}`,
        type: 'ModelUnavailable',
        details: [{ type: failure.type }],
      });
  }
}

/** A failed model call's kind for metrics: rate_limited, rejected (4xx), unavailable (5xx, unreachable), or other. */
export function modelErrorKind(
  error: unknown,
  failureOf: FailureReader,
): 'rate_limited' | 'rejected' | 'unavailable' | 'other' {
  return failureKind(failureOf(error));
}

function failureKind(
  failure: WireFailure | undefined,
): 'rate_limited' | 'rejected' | 'unavailable' | 'other' {
  switch (failure?.kind) {
    case 'status':
      if (failure.status === 429) return 'rate_limited';
      return failure.status < 500 ? 'rejected' : 'unavailable';
    case 'unreachable':
      return 'unavailable';
    case 'transient':
      return failure.reason;
    default:
      return 'other';
  }
}

/** How long a rate-limited call asked the fleet to wait (its Retry-After), when it was rate limited at all. */
export function rateLimitOf(
  error: unknown,
  failureOf: FailureReader,
  nowMs: number,
): { retryAfterMs: number | undefined } | undefined {
  const failure = failureOf(error);
  if (failureKind(failure) !== 'rate_limited') return undefined;
  return { retryAfterMs: failure?.kind === 'status' ? retryAfterOf(failure.headers, nowMs) : undefined };
}

/** The longest wait a Retry-After is followed for; beyond it the retry policy's backoff applies. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/**
 * How long the endpoint asked to wait, in ms: `retry-after-ms`, or `retry-after` in seconds or as an
 * HTTP date. Undefined when absent, unreadable or longer than MAX_RETRY_AFTER_MS.
 */
export function retryAfterOf(headers: Headers | undefined, nowMs: number): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  const raw = headers?.get('retry-after')?.trim();
  let wait: number | undefined;
  if (Number.isFinite(milliseconds) && milliseconds >= 0) wait = milliseconds;
  else if (raw && /^\d+(\.\d+)?$/.test(raw)) wait = Number(raw) * 1_000;
  else if (raw && !Number.isNaN(Date.parse(raw))) wait = Math.max(0, Date.parse(raw) - nowMs);
  if (wait === undefined || wait > MAX_RETRY_AFTER_MS) return undefined;
  return Math.ceil(wait);
}
