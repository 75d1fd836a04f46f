import { runStreamFrame } from '../../src/console/run-stream-route';

const base = { seq: 4, at: 0, run: 1 };

test("a model call tried again reaches the console page as the run's progress, in words", () => {
  const frame = runStreamFrame({
    ...base,
    type: 'model_retry',
    attempt: 2,
    error: 'the model endpoint answered 503',
  });
  expect(frame).toBe(
    `event: progress\ndata: ${JSON.stringify({
      toolName: 'model',
      text: 'the model call failed (the model endpoint answered 503); trying again: attempt 2',
    })}\n\n`,
  );
});

test('an error text that tries to end the frame and start another stays inside its one data line', () => {
  const frame = runStreamFrame({
    ...base,
    type: 'model_retry',
    attempt: 3,
    error: 'x\n\nevent: changed\ndata: {"type":"run_finished"}',
  });
  expect(frame.split('\n\n')).toEqual([expect.stringMatching(/^event: progress\ndata: \{.*\}$/), '']);
});

test('other events only tell the page that something changed', () => {
  expect(runStreamFrame({ ...base, type: 'run_started', messageIds: ['m'] })).toBe(
    'event: changed\ndata: {"type":"run_started"}\n\n',
  );
});
