import {
  QueryNotRegisteredError,
  ServiceError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from '@temporalio/client';
import {
  EndedUnansweredError,
  describeWhileUnreachable,
  queryRetried,
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
  const answer = settledState(queryWhileRunning(handle, query));
  await jest.advanceTimersByTimeAsync(40_000);
  expect(answer.settled).toBe('rejected');
  expect(answer.error).toBeInstanceOf(ServiceError);
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

test('an abort stops a look at a workflow the server does not answer', async () => {
  const stop = new AbortController();
  const handle = describing(Array.from({ length: 1_000 }, () => 14));
  const described = settledState(describeWhileUnreachable(handle, stop.signal));
  await jest.advanceTimersByTimeAsync(2_000);
  expect(described.settled).toBe('no');
  stop.abort();
  await jest.advanceTimersByTimeAsync(1_000);
  expect(described.settled).toBe('rejected');
});

/** How `promise` has settled so far (read after letting timers and microtasks run). */
function settledState<T>(promise: Promise<T>) {
  const state: { settled: 'no' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { settled: 'no' };
  promise.then(
    (value) => Object.assign(state, { settled: 'resolved', value }),
    (error: unknown) => Object.assign(state, { settled: 'rejected', error }),
  );
  return state;
}

/** A query that always fails with `failure()`, counting its calls and when they came. */
function failingQuery(failure: () => Error) {
  const calls: number[] = [];
  const query = () => {
    calls.push(Date.now());
    return Promise.reject(failure());
  };
  return { calls, query };
}

/**
 * A handle whose calls are cancelled as the Temporal client cancels them: one made while its signal
 * is aborted fails as a ServiceError, so only the retry loop's own check of the signal stops it.
 */
function abortableHandle(status = 'RUNNING') {
  return {
    workflowId: 'conv-1',
    client: {
      withAbortSignal: <T>(signal: AbortSignal, call: () => Promise<T>) =>
        signal.aborted ? Promise.reject(new ServiceError('Call cancelled')) : call(),
    },
    describe: () => Promise.resolve({ status: { name: status } }),
  } as unknown as WorkflowHandle;
}

describe('queryRetried', () => {
  test('a failure that is not the server’s (no such workflow, no such query) is thrown at once, unasked again', async () => {
    for (const refusal of [
      new WorkflowNotFoundError('workflow not found', 'conv-1', undefined),
      new QueryNotRegisteredError('no query named status', 3),
    ]) {
      const { calls, query } = failingQuery(() => refusal);
      const answer = settledState(queryRetried(query, { withinMs: 60_000 }));
      await jest.advanceTimersByTimeAsync(0);
      expect(answer).toEqual({ settled: 'rejected', error: refusal });
      expect(calls).toHaveLength(1);
    }
  });

  test('the server’s failures are asked again until answered, and given up on within the deadline', async () => {
    let failures = 3;
    const answered = queryRetried(
      () =>
        failures-- > 0 ? Promise.reject(new ServiceError('Failed to query Workflow')) : Promise.resolve('ok'),
      { withinMs: 5_000 },
    );
    await jest.advanceTimersByTimeAsync(5_000);
    await expect(answered).resolves.toBe('ok');

    const start = Date.now();
    const { calls, query } = failingQuery(() => new ServiceError('Failed to query Workflow'));
    const answer = settledState(queryRetried(query, { withinMs: 3_000 }));
    await jest.advanceTimersByTimeAsync(3_000);
    expect(answer.settled).toBe('rejected');
    expect(answer.error).toBeInstanceOf(ServiceError);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((at) => at - start <= 3_000)).toBe(true);
  });

  test('an aborted signal stops asking', async () => {
    const stop = new AbortController();
    stop.abort();
    const { calls, query } = failingQuery(() => new ServiceError('Call cancelled'));
    const answer = settledState(queryRetried(query, { withinMs: 60_000, signal: stop.signal }));
    await jest.advanceTimersByTimeAsync(0);
    expect(answer.settled).toBe('rejected');
    expect(calls).toHaveLength(1);
  });
});

describe('queryWhileRunning', () => {
  test('a failure of the query that is not the server’s is thrown at once, without looking at the workflow', async () => {
    const handle = abortableHandle();
    const describe = jest.spyOn(handle, 'describe');
    const refusal = new QueryNotRegisteredError('no query named events', 3);
    const { calls, query } = failingQuery(() => refusal);
    const answer = settledState(queryWhileRunning(handle, query));
    await jest.advanceTimersByTimeAsync(0);
    expect(answer).toEqual({ settled: 'rejected', error: refusal });
    expect(calls).toHaveLength(1);
    expect(describe).not.toHaveBeenCalled();
  });

  test('a look at the workflow that fails other than the server’s way is thrown at once', async () => {
    const gone = new WorkflowNotFoundError('workflow not found', 'conv-1', undefined);
    const handle = {
      ...abortableHandle(),
      describe: () => Promise.reject(gone),
    } as unknown as WorkflowHandle;
    const { calls, query } = failingQuery(() => new ServiceError('Failed to query Workflow'));
    const answer = settledState(queryWhileRunning(handle, query));
    await jest.advanceTimersByTimeAsync(0);
    expect(answer).toEqual({ settled: 'rejected', error: gone });
    expect(calls).toHaveLength(1);
  });

  test('an abort stops asking a running conversation at once', async () => {
    const stop = new AbortController();
    const { calls, query } = failingQuery(() => new ServiceError('Failed to query Workflow'));
    const answer = settledState(queryWhileRunning(abortableHandle(), query, { signal: stop.signal }));
    await jest.advanceTimersByTimeAsync(2_000);
    expect(answer.settled).toBe('no');
    const asked = calls.length;
    stop.abort();
    await jest.advanceTimersByTimeAsync(1_000);
    expect(answer.settled).toBe('rejected');
    expect(calls.length).toBeLessThanOrEqual(asked + 1);
  });
});
