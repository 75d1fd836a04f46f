import { sayingWhenSlow, unansweredWords } from '../../src/cli/worker-presence';

// What `status` says while no worker answers for a running conversation.

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);

test('an unanswered question names the workers the server still lists, how long ago each polled, and what comes next', () => {
  const words = unansweredWords({
    conversationId: 'conv-1',
    taskQueue: 'agents',
    waitedMs: 3_020,
    pollers: [
      { identity: '4242@box-b', lastPollAt: NOW - 12_400 },
      { identity: '77@box-c http://10.0.0.3:7070', lastPollAt: NOW - 40_000 },
    ],
    nowMs: NOW,
  });
  expect(words).toBe(
    'no worker has answered for conversation conv-1 in 3 s; still waiting. The worker that had it may have died: ' +
      'the server lists a worker for about a minute after its last poll, dead or alive, and lists ' +
      '4242@box-b (last poll 12 s ago), 77@box-c http://10.0.0.3:7070 (last poll 40 s ago) on task queue agents. ' +
      'A worker started on agents answers (durable-agent worker); with none, the server gives up about 30 s after the question.',
  );
});

test('at most three workers are named; none listed is said too', () => {
  const pollers = [1, 2, 3, 4, 5].map((n) => ({ identity: `${n}@box`, lastPollAt: NOW }));
  const many = unansweredWords({ conversationId: 'c', taskQueue: 'q', waitedMs: 3_000, pollers, nowMs: NOW });
  expect(many).toContain('3@box (last poll 0 s ago) and 2 more on task queue q');
  expect(many).not.toContain('4@box');
  const none = unansweredWords({
    conversationId: 'c',
    taskQueue: 'q',
    waitedMs: 3_000,
    pollers: [],
    nowMs: NOW,
  });
  expect(none).toContain(
    'The worker that had it may have died: the server lists no worker on task queue q now.',
  );
});

describe('sayingWhenSlow', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A promise and the functions that settle it. */
  function deferred<T>() {
    let resolve!: (value: T) => void;
    const promise = new Promise<T>((settle) => (resolve = settle));
    return { promise, resolve };
  }

  test('says nothing of an answer that comes in time', async () => {
    const said: string[] = [];
    const answer = deferred<string>();
    const waiting = sayingWhenSlow(
      answer.promise,
      3_000,
      () => Promise.resolve('slow'),
      (line) => said.push(line),
    );
    await jest.advanceTimersByTimeAsync(2_999);
    answer.resolve('done');
    await expect(waiting).resolves.toBe('done');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(said).toEqual([]);
  });

  test('says once that the answer is slow, and still gives the answer', async () => {
    const said: string[] = [];
    const answer = deferred<string>();
    const waiting = sayingWhenSlow(
      answer.promise,
      3_000,
      () => Promise.resolve('slow'),
      (line) => said.push(line),
    );
    await jest.advanceTimersByTimeAsync(3_000);
    expect(said).toEqual(['slow']);
    await jest.advanceTimersByTimeAsync(20_000);
    answer.resolve('done');
    await expect(waiting).resolves.toBe('done');
    expect(said).toEqual(['slow']);
  });

  test('says nothing when the answer comes while the words are being made', async () => {
    const said: string[] = [];
    const answer = deferred<string>();
    const words = deferred<string>();
    const waiting = sayingWhenSlow(
      answer.promise,
      3_000,
      () => words.promise,
      (line) => said.push(line),
    );
    await jest.advanceTimersByTimeAsync(3_000);
    answer.resolve('done');
    await expect(waiting).resolves.toBe('done');
    words.resolve('slow');
    await jest.advanceTimersByTimeAsync(0);
    expect(said).toEqual([]);
  });

  test('a failed answer fails, and the words are not said after it', async () => {
    const said: string[] = [];
    const waiting = sayingWhenSlow(
      Promise.reject(new Error('Failed to query Workflow')),
      3_000,
      () => Promise.resolve('slow'),
      (line) => said.push(line),
    );
    await expect(waiting).rejects.toThrow('Failed to query Workflow');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(said).toEqual([]);
  });
});
