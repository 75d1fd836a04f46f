import { runWatched } from '../../src/cli/commands/watch';
import { endsRun } from '../../src/client/run-end';
import type { AgentEvent } from '../../src/shared/events';

const finished = (run: number): AgentEvent => ({
  type: 'run_finished',
  seq: 10,
  at: 0,
  run,
  messageIds: [],
  outcome: 'answered',
  answer: 'done',
});

test('watching an idle conversation ends with the first run to finish, even one the status did not show running', () => {
  // The status said idle after run 1, yet run 1 was still waiting on a tool (a worker had crashed).
  const watched = runWatched('conv-1', { run: 2, afterSeq: 9, idle: true });
  expect(watched).toEqual({ conversationId: 'conv-1', afterSeq: 9 });
  expect(endsRun(finished(1), watched)).toBe(true);
  expect(endsRun(finished(2), watched)).toBe(true);
  expect(
    endsRun({ type: 'steered', seq: 11, at: 0, run: 2, messageId: 'm', text: 't', interrupted: [] }, watched),
  ).toBe(false);
});

test('watching a run in progress ends with that run', () => {
  const watched = runWatched('conv-1', { run: 3, afterSeq: 20, idle: false });
  expect(endsRun(finished(2), watched)).toBe(false);
  expect(endsRun(finished(3), watched)).toBe(true);
});
