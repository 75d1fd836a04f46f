import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { classifyModelError, retryAfterOf } from '../../src/activities/models/model-failures';
import { openAiFailureOf } from '../../src/activities/models/openai/openai-failures';

const apiError = (status: number, message = 'bad thing') =>
  OpenAI.APIError.generate(status, { error: { message } }, message, new Headers());

function asFailure(value: unknown): ApplicationFailure {
  expect(value).toBeInstanceOf(ApplicationFailure);
  return value as ApplicationFailure;
}

test.each([400, 401, 403, 404, 422])('status %i is a non-retryable ModelRequestRejected', (status) => {
  const failure = asFailure(classifyModelError(apiError(status), openAiFailureOf));
  expect(failure.nonRetryable).toBe(true);
  expect(failure.type).toBe('ModelRequestRejected');
  expect(failure.message).toContain(String(status));
  expect(failure.message).toContain('bad thing');
  expect(failure.details).toEqual([{ status }]);
});

test.each([408, 409, 429, 500, 502, 503, 504])('status %i is a retryable ModelUnavailable', (status) => {
  const failure = asFailure(classifyModelError(apiError(status), openAiFailureOf));
  expect(failure.nonRetryable).toBe(false);
  expect(failure.type).toBe('ModelUnavailable');
  expect(failure.details).toEqual([{ status }]);
});

test('a plain APIError built with the constructor is classified too', () => {
  const error = new OpenAI.APIError(403, { error: { message: 'x' } }, 'x', new Headers());
  expect(asFailure(classifyModelError(error, openAiFailureOf)).nonRetryable).toBe(true);
});

test('a connection error is retryable', () => {
  const error = new OpenAI.APIConnectionError({ message: 'ECONNREFUSED', cause: new Error('refused') });
  const failure = asFailure(classifyModelError(error, openAiFailureOf));
  expect(failure.nonRetryable).toBe(false);
  expect(failure.type).toBe('ModelUnavailable');
  expect(failure.message).toContain('ECONNREFUSED');
});

test('a connection timeout is retryable', () => {
  const failure = asFailure(classifyModelError(new OpenAI.APIConnectionTimeoutError(), openAiFailureOf));
  expect(failure.nonRetryable).toBe(false);
  expect(failure.type).toBe('ModelUnavailable');
});

test('other errors are returned unchanged', () => {
  const plain = new Error('something else');
  expect(classifyModelError(plain, openAiFailureOf)).toBe(plain);
  const abort = new OpenAI.APIUserAbortError();
  expect(classifyModelError(abort, openAiFailureOf)).toBe(abort);
  expect(classifyModelError('a string', openAiFailureOf)).toBe('a string');
});

test('a 429 with Retry-After waits that long before the next attempt; without it, the backoff applies', () => {
  const limited = (headers: Record<string, string>) =>
    asFailure(
      classifyModelError(
        OpenAI.APIError.generate(429, { error: { message: 'slow down' } }, 'slow down', new Headers(headers)),
        openAiFailureOf,
      ),
    );
  expect(limited({ 'retry-after': '7' }).nextRetryDelay).toBe(7_000);
  expect(limited({ 'retry-after-ms': '1500' }).nextRetryDelay).toBe(1_500);
  expect(limited({}).nextRetryDelay).toBeUndefined();
  expect(limited({}).nonRetryable).toBe(false);
  // An HTTP date, a value that cannot be read, and one too long to wait for.
  expect(
    retryAfterOf(
      new Headers({ 'retry-after': 'Wed, 25 Nov 2026 18:00:30 GMT' }),
      Date.parse('2026-11-25T18:00:00Z'),
    ),
  ).toBe(30_000);
  expect(retryAfterOf(new Headers({ 'retry-after': 'soon' }), 0)).toBeUndefined();
  expect(retryAfterOf(new Headers({ 'retry-after': '3600' }), 0)).toBeUndefined();
});
