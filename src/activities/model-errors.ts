import { ApplicationFailure } from '@temporalio/activity';
import OpenAI from 'openai';

/** Statuses that will not change on a retry: the request itself is wrong or not allowed. */
const NON_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/** Temporal does the retrying (the client's own retries are off), so each failure is classified here. */
export function classifyModelError(error: unknown): unknown {
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const detail = `the model endpoint answered ${error.status}: ${error.message}`;
    return NON_RETRYABLE_STATUSES.has(error.status)
      ? ApplicationFailure.nonRetryable(detail, 'ModelRequestRejected', { status: error.status })
      : ApplicationFailure.retryable(detail, 'ModelUnavailable', { status: error.status });
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
