import { ServiceError, type WorkflowHandle } from '@temporalio/client';
import {
  EndedUnansweredError,
  describeWhileUnreachable,
  queryWhileRunning,
} from '../../src/client/query-retry';

/** A handle whose query and describe answer from scripts: a value, or a failure of the server. */
function fakeHandle(queries: Array<string | 'fail'>, statuses: Array<string | 'fail'>) {
  const next = <T>(script: Array<T | 'fail'>, last: T | 'fail') => {
    const step = script.length ? script.shift()! : last;
    if (step === 'fail') return Promise.reject(new ServiceError('Failed to query Workflow'));
    return Promise.resolve(step);
  };
  const lastQuery = queries.at(-1) ?? 'fail';
  const lastStatus = statuses.at(-1) ?? 'fail';
  const handle = {
    workflowId: 'conv-1',
    client: { withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call() },
    describe: () => next(statuses, lastStatus).then((name) => ({ status: { name } })),
  } as unknown as WorkflowHandle;
  return { handle, query: () => next(queries, lastQuery) };
}

beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
afterEach(() => jest.useRealTimers());

test('a running conversation is asked again, also while the server itself does not answer for a moment', async () => {
  const { handle, query } = fakeHandle(['fail', 'fail', 'fail', 'events'], ['fail', 'fail', 'RUNNING']);
  const answer = queryWhileRunning(handle, query);
  await jest.advanceTimersByTimeAsync(10_000);
  await expect(answer).resolves.toBe('events');
});

test('a server that does not come back fails the query after a while', async () => {
  const { handle, query } = fakeHandle(['fail'], ['fail']);
  const answer = queryWhileRunning(handle, query);
  const failed = expect(answer).rejects.toThrow(ServiceError);
  await jest.advanceTimersByTimeAsync(40_000);
  await failed;
});

test('an ended conversation no worker answers for is given up on after afterEndMs', async () => {
  const { handle, query } = fakeHandle(['fail'], ['COMPLETED']);
  const atOnce = queryWhileRunning(handle, query, { afterEndMs: 0 });
  await expect(atOnce).rejects.toThrow(EndedUnansweredError);

  const later = queryWhileRunning(handle, query, { afterEndMs: 5_000 });
  const failed = expect(later).rejects.toThrow('conversation conv-1 has ended and no worker answers for it');
  await jest.advanceTimersByTimeAsync(10_000);
  await failed;
});

test('a query that fails while no worker answers is answered within half a second of a worker answering again', async () => {
  const answersFrom = Date.now() + 6_000;
  const handle = {
    workflowId: 'conv-1',
    client: { withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call() },
    describe: () => Promise.resolve({ status: { name: 'RUNNING' } }),
  } as unknown as WorkflowHandle;
  const query = () =>
    Date.now() < answersFrom
      ? Promise.reject(new ServiceError('Failed to query Workflow'))
      : Promise.resolve('events');
  let answered: number | undefined;
  void queryWhileRunning(handle, query).then(() => (answered = Date.now()));
  await jest.advanceTimersByTimeAsync(8_000);
  expect(answered).toBeDefined();
  expect(answered! - answersFrom).toBeLessThanOrEqual(500);
});

/** A failure of a call the server did not answer (gRPC `code`), as the Temporal client throws it. */
function serviceFailure(code: number): ServiceError {
  const grpc = Object.assign(new Error(`${code} no connection`), {
    code,
    details: 'no connection',
    metadata: {},
  });
  return new ServiceError('Failed to describe workflow', { cause: grpc });
}

/** A handle whose describe fails with each of `failures` (gRPC codes) in turn, then answers RUNNING. */
function describing(failures: number[]) {
  return {
    workflowId: 'conv-1',
    client: { withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call() },
    describe: () => {
      const code = failures.shift();
      return code === undefined
        ? Promise.resolve({ status: { name: 'RUNNING' } })
        : Promise.reject(serviceFailure(code));
    },
  } as unknown as WorkflowHandle;
}

test('a look at the workflow rides out a server that does not answer for a moment (UNAVAILABLE, DEADLINE_EXCEEDED), and no longer', async () => {
  const described = describeWhileUnreachable(describing([14, 4, 14]));
  await jest.advanceTimersByTimeAsync(5_000);
  await expect(described).resolves.toEqual({ status: { name: 'RUNNING' } });

  const gone = describeWhileUnreachable(describing(Array.from({ length: 1_000 }, () => 14)));
  const failed = expect(gone).rejects.toThrow(ServiceError);
  await jest.advanceTimersByTimeAsync(40_000);
  await failed;
});

test('a look at a workflow that the server refuses, or that does not exist, fails at once', async () => {
  await expect(describeWhileUnreachable(describing([7]))).rejects.toThrow('Failed to describe workflow');
  const handle = {
    workflowId: 'conv-1',
    client: { withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call() },
    describe: () => Promise.reject(new Error('workflow not found')),
  } as unknown as WorkflowHandle;
  await expect(describeWhileUnreachable(handle)).rejects.toThrow('workflow not found');
});
