import type { AgentEvent } from '../../src/shared/events';
import type { PendingApproval } from '../../src/shared/approvals';
import { decodeCursor, encodeCursor } from '../../src/gateway/a2a/a2a-cursor';
import { parseTaskId, taskIdOf } from '../../src/gateway/a2a/a2a-ids';
import { type TaskFacts, taskView } from '../../src/gateway/a2a/a2a-task-view';

const ref = { taskId: 'a2a-ctx/m1', contextId: 'a2a-ctx', messageId: 'm1' };
const at = 1_700_000_000_000;
const facts = (events: AgentEvent[], more: Partial<TaskFacts> = {}): TaskFacts => ({
  ref,
  receipt: { afterSeq: 3, afterRun: 1 },
  events,
  pending: [],
  ended: false,
  now: at,
  ...more,
});
const started: AgentEvent = { type: 'run_started', seq: 4, at, run: 2, messageIds: ['m1'] };
const finished = (
  outcome: 'answered' | 'aborted' | 'refused' | 'budget_exhausted',
  answer = '',
): AgentEvent => ({
  type: 'run_finished',
  seq: 9,
  at,
  run: 2,
  messageIds: ['m1'],
  outcome,
  answer,
  ...(outcome === 'refused' ? { refusal: 'not that' } : {}),
});

test('a message no run has taken is submitted; in a conversation that ended, failed', () => {
  expect(taskView(facts([])).state).toBe('TASK_STATE_SUBMITTED');
  const earlier: AgentEvent = { type: 'run_started', seq: 4, at, run: 2, messageIds: ['m0'] };
  expect(taskView(facts([earlier])).state).toBe('TASK_STATE_SUBMITTED');
  expect(taskView(facts([], { ended: true })).state).toBe('TASK_STATE_FAILED');
});

test('the run that took it works; waiting for a decision of its own run, input-required', () => {
  expect(taskView(facts([started]))).toMatchObject({ state: 'TASK_STATE_WORKING', run: 2, lastSeq: 4 });
  const waiting = {
    toolCallId: 'call_1',
    run: 2,
    toolName: 'record',
    arguments: '{}',
    argumentsSha256: 'b'.repeat(64),
    risk: 'high',
  } as PendingApproval;
  expect(taskView(facts([started], { pending: [waiting] })).state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(taskView(facts([started], { pending: [{ ...waiting, run: 3 }] })).state).toBe('TASK_STATE_WORKING');
});

test('its run’s end decides the rest: answered completed with the answer, aborted canceled, any other end failed with why', () => {
  const done = taskView(facts([started, finished('answered', 'Yes.')]));
  expect(done.state).toBe('TASK_STATE_COMPLETED');
  expect(done.task.artifacts).toEqual([
    { artifactId: 'answer', name: 'answer', parts: [{ text: 'Yes.', mediaType: 'text/plain' }] },
  ]);
  const aborted: AgentEvent = {
    type: 'aborted',
    seq: 8,
    at,
    run: 2,
    by: 'desk',
    reason: 'enough',
    interrupted: [],
  };
  const canceled = taskView(facts([started, aborted, finished('aborted')]));
  expect(canceled.state).toBe('TASK_STATE_CANCELED');
  expect(canceled.task.status.message?.parts[0]?.text).toBe('canceled by desk: enough');
  const refused = taskView(facts([started, finished('refused')]));
  expect(refused.state).toBe('TASK_STATE_FAILED');
  expect(refused.task.status.message?.parts[0]?.text).toMatch(/refused to answer: not that/);
  const spent: AgentEvent = {
    type: 'budget_exhausted',
    seq: 8,
    at,
    run: 2,
    budget: 'tokens',
    used: 120,
    limit: 100,
    by: 'timeout',
  };
  expect(
    taskView(facts([started, spent, finished('budget_exhausted')])).task.status.message?.parts[0]?.text,
  ).toMatch(/tokens budget \(120 of 100\) and timeout stopped it/);
});

test('a task id names its context and message; anything else names no task', () => {
  expect(parseTaskId(taskIdOf('a2a-ctx', 'a2a-123/x'))).toEqual({
    contextId: 'a2a-ctx',
    messageId: 'a2a-123/x',
  });
  for (const hostile of ['', '/m', 'ctx/', 'no-slash']) expect(parseTaskId(hostile)).toBeUndefined();
});

test('a cursor comes back as it was sent; anything a client makes up is none', () => {
  const cursor = { seq: 12, run: 3, call: 'run/7#1', textEnd: 40 };
  expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
  const forged = Buffer.from(JSON.stringify({ s: -1 })).toString('base64url');
  for (const hostile of [undefined, '', 'not base64!', forged, 'x'.repeat(2000)])
    expect(decodeCursor(hostile)).toBeUndefined();
});

test('a budget pause of the task’s run is input-required too, saying which part ran out', () => {
  const pause = {
    toolCallId: 'budget-1',
    run: 2,
    toolName: 'budget',
    arguments: '{}',
    argumentsSha256: 'c'.repeat(64),
    risk: 'high',
    budget: { kind: 'tokens', used: 120, limit: 100, defaultRaise: 100 },
  } as PendingApproval;
  const view = taskView(facts([started], { pending: [pause] }));
  expect(view.state).toBe('TASK_STATE_INPUT_REQUIRED');
  expect(view.task.status.message?.parts).toEqual([
    expect.objectContaining({ text: expect.stringContaining('paused at its tokens budget') }),
    expect.objectContaining({
      data: expect.objectContaining({
        kind: 'approval_request',
        toolCallId: 'budget-1',
        budget: pause.budget,
      }),
    }),
  ]);
});
