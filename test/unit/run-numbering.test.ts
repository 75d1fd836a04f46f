import { RunNumbering } from '../../src/history/run-numbering';

// The cases the recorded histories do not show; theirs are in timeline.test.ts.

test('a run reaching maxToolIterations ends once its tools return: the next model call starts a new run', () => {
  const runs = new RunNumbering();
  runs.executionStarted({ maxToolIterations: 2, queuedMessageIds: [] });
  runs.messageReceived('m1');
  expect(runs.modelCallScheduled(['m1'])).toEqual({ run: 1, iteration: 1, took: ['m1'] });
  runs.modelCallAnswered(1);
  expect(runs.modelCallScheduled([])).toEqual({ run: 1, iteration: 2 });
  runs.modelCallAnswered(1);
  expect(runs.current).toBe(1);
  runs.messageReceived('m2');
  expect(runs.modelCallScheduled(['m2'])).toEqual({ run: 2, iteration: 1, took: ['m2'] });
});

test('steering keeps a run going past an answer and past the iteration limit', () => {
  const runs = new RunNumbering();
  runs.executionStarted({ maxToolIterations: 1, queuedMessageIds: [] });
  runs.messageReceived('m1');
  runs.modelCallScheduled(['m1']);
  runs.steeringReceived('s1');
  runs.modelCallAnswered(1);
  expect(runs.modelCallScheduled(['s1'])).toEqual({ run: 1, iteration: 2 });
  runs.steeringReceived('s2');
  runs.modelCallAnswered(0);
  expect(runs.modelCallScheduled(['s2'])).toEqual({ run: 1, iteration: 3 });
  runs.modelCallAnswered(0);
  expect(runs.current).toBeUndefined();
});

test('a steer while idle starts the next run; an abort or a failed model call ends one', () => {
  const runs = new RunNumbering();
  runs.executionStarted({ queuedMessageIds: [] });
  runs.steeringReceived('s1');
  expect(runs.modelCallScheduled(['s1'])).toEqual({ run: 1, iteration: 1, took: ['s1'] });
  runs.aborted();
  expect(runs.current).toBeUndefined();
  runs.messageReceived('m2');
  expect(runs.modelCallScheduled(['m2'])).toMatchObject({ run: 2, took: ['m2'] });
  runs.modelCallFailed();
  expect(runs.current).toBeUndefined();
});

test('after continue-as-new runs count on from the carried count and take the carried queue; a compacted input does not re-take old messages', () => {
  const runs = new RunNumbering();
  runs.executionStarted({ runCount: 7, queuedMessageIds: ['queued'] });
  expect(runs.modelCallScheduled(['old-1', 'old-2', 'queued'])).toEqual({
    run: 8,
    iteration: 1,
    took: ['queued'],
  });
});
