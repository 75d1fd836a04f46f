import { runEndWatched } from '../../src/cli/commands/watch';
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
  const until = runEndWatched({ run: 2, afterSeq: 9, idle: true });
  expect(until(finished(1))).toBe(true);
  expect(until(finished(2))).toBe(true);
  expect(until({ type: 'steered', seq: 11, at: 0, run: 2, messageId: 'm', text: 't', interrupted: [] })).toBe(
    false,
  );
});

test('watching a run in progress ends with that run', () => {
  const until = runEndWatched({ run: 3, afterSeq: 20, idle: false });
  expect(until(finished(2))).toBe(false);
  expect(until(finished(3))).toBe(true);
});
