import Anthropic from '@anthropic-ai/sdk';
import type { WireFailure } from '../model-wire';

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

/** An error of Anthropic's client in the terms every wire shares; its 529 (overloaded) is a 5xx like any other. */
export function anthropicFailureOf(error: unknown): WireFailure | undefined {
  if (error instanceof Anthropic.APIConnectionError) return { kind: 'unreachable', message: error.message };
  if (!(error instanceof Anthropic.APIError)) return undefined;
  if (typeof error.status === 'number') {
    return {
      kind: 'status',
      status: error.status,
      message: error.message,
      ...(error.headers ? { headers: error.headers } : {}),
    };
  }
  const reason = error.type ? TRANSIENT_STREAM_ERRORS.get(error.type) : undefined;
  return reason && error.type
    ? { kind: 'transient', type: error.type, reason, message: error.message }
    : undefined;
}
