import { ApplicationFailure } from '@temporalio/activity';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

/** Statuses that will not change on a retry: the request itself is wrong or not allowed. */
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/** An HTTP error from either SDK: its status, message and headers. */
interface StatusError {
  status: number;
  message: string;
  headers: Headers | undefined;
}

function statusErrorOf(error: unknown): StatusError | undefined {
  const isApiError = error instanceof OpenAI.APIError || error instanceof Anthropic.APIError;
  if (!isApiError || typeof error.status !== 'number') return undefined;
  return { status: error.status, message: error.message, headers: error.headers };
}

function isConnectionError(error: unknown): error is Error {
  return error instanceof OpenAI.APIConnectionError || error instanceof Anthropic.APIConnectionError;
}

/**
 * Anthropic's error types that may come as an `error` event in a stream already answered 200
 * (so with no status), which its SDK throws as an APIError: the ones a retry may get past.
 */
const TRANSIENT_STREAM_ERRORS = new Map<string, 'rate_limited' | 'unavailable'>([
  ['overloaded_error', 'unavailable'],
  ['api_error', 'unavailable'],
  ['timeout_error', 'unavailable'],
  ['rate_limit_error', 'rate_limited'],
]);

/** A transient error event of an Anthropic stream: its type. */
function transientStreamErrorOf(error: unknown): string | undefined {
  if (!(error instanceof Anthropic.APIError) || error.status !== undefined) return undefined;
  const type = error.type;
  return type && TRANSIENT_STREAM_ERRORS.has(type) ? type : undefined;
}

/**
 * Temporal does the retrying (the clients' own retries are off), so each failure is classified
 * here, from OpenAI's SDK and Anthropic's alike. Anthropic's 529 (overloaded) is a 5xx: retryable.
 */
export function classifyModelError(error: unknown): unknown {
  const failed = statusErrorOf(error);
  if (failed) {
    const detail = `the model endpoint answered ${failed.status}: ${failed.message}`;
    if (NON_RETRYABLE_STATUSES.has(failed.status)) {
      return ApplicationFailure.nonRetryable(detail, 'ModelRequestRejected', { status: failed.status });
    }
    const retryAfterMs = retryAfterOf(failed.headers, Date.now());
    return ApplicationFailure.create({
      message: detail,
      type: 'ModelUnavailable',
      details: [{ status: failed.status }],
      // The endpoint said when to come back (429, 503): the next attempt waits that long, not the backoff.
      ...(retryAfterMs !== undefined ? { nextRetryDelay: retryAfterMs } : {}),
    });
  }
  if (isConnectionError(error)) {
    return ApplicationFailure.retryable(
      `could not reach the model endpoint: ${error.message}`,
      'ModelUnavailable',
    );
  }
  const streamError = transientStreamErrorOf(error);
  if (streamError) {
    return ApplicationFailure.create({
      message: `the model endpoint sent an error in its stream: ${(error as Error).message}`,
      type: 'ModelUnavailable',
      details: [{ type: streamError }],
    });
  }
  return error;
}

/** A failed model call's kind for metrics: rate_limited, rejected (4xx), unavailable (5xx, unreachable), or other. */
export function modelErrorKind(error: unknown): 'rate_limited' | 'rejected' | 'unavailable' | 'other' {
  const failed = statusErrorOf(error);
  if (failed) {
    if (failed.status === 429) return 'rate_limited';
    return failed.status < 500 ? 'rejected' : 'unavailable';
  }
  if (isConnectionError(error)) return 'unavailable';
  const streamError = transientStreamErrorOf(error);
  if (streamError) return TRANSIENT_STREAM_ERRORS.get(streamError)!;
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
