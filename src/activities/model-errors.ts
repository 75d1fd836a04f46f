import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';

/** Statuses that will not change on a retry: the request itself is wrong or not allowed. */
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/** Temporal does the retrying (the client's own retries are off), so each failure is classified here. */
export function classifyModelError(error: unknown): unknown {
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const detail = `the model endpoint answered ${error.status}: ${error.message}`;
    if (NON_RETRYABLE_STATUSES.has(error.status)) {
      return ApplicationFailure.nonRetryable(detail, 'ModelRequestRejected', { status: error.status });
    }
    const retryAfterMs = retryAfterOf(error.headers, Date.now());
    return ApplicationFailure.create({
      message: detail,
      type: 'ModelUnavailable',
      details: [{ status: error.status }],
      // The endpoint said when to come back (429, 503): the next attempt waits that long, not the backoff.
      ...(retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
    });
  }
  if (error instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.retryable(
      `could not reach the model endpoint: ${error.message}`,
      'ModelUnavailable',
    );
  }
  return error;
}

/** A failed model call's kind for metrics: rate_limited, rejected (4xx), unavailable (5xx, unreachable), or other. */
export function modelErrorKind(error: unknown): 'rate_limited' | 'rejected' | 'unavailable' | 'other' {
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    if (error.status === 429) return 'rate_limited';
    return error.status < 500 ? 'rejected' : 'unavailable';
  }
  if (error instanceof OpenAI.APIConnectionError) return 'unavailable';
  return 'other';
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
