import type { AgentEvent } from '../../src/shared/events';
import type { PendingApproval } from '../../src/shared/approvals';
import { decodeCursor } from '../../src/gateway/a2a/a2a-cursor';
import { TaskUpdates } from '../../src/gateway/a2a/a2a-task-updates';

const ref = { taskId: 'a2a-ctx/m1', contextId: 'a2a-ctx', messageId: 'm1' };
const at = 1_700_000_000_000;
const started: AgentEvent = { type: 'run_started', seq: 5, at, run: 2, messageIds: ['m1'] };
const text = (offset: number, chunk: string, run = 2): AgentEvent => ({
  type: 'model_text',
  seq: 5,
  at,
  run,
  call: 'r/1#1',
  offset,
  text: chunk,
});
const pending: PendingApproval = {
  toolCallId: 'call_1',
  toolName: 'record',
  arguments: '{"value":"x"}',
  argumentsLength: 13,
  argumentsSha256: 'a'.repeat(64),
  scope: 'record',
  risk: 'medium',
  mode: 'ask',
  requestedAt: at,
  run: 2,
};

const kinds = (updates: ReturnType<TaskUpdates['updatesFor']>) =>
  updates.map(({ response }) =>
    'statusUpdate' in response
      ? response.statusUpdate.status.state
      : 'artifactUpdate' in response
        ? `${response.artifactUpdate.artifact.artifactId}:${response.artifactUpdate.artifact.parts[0]?.text}`
        : 'task',
  );

test('the run that takes the message works on the task; another run is none of its business', () => {
  const updates = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  expect(kinds(updates.updatesFor({ ...started, messageIds: ['other'], run: 2 }))).toEqual([]);
  const mine = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  expect(kinds(mine.updatesFor(started))).toEqual(['TASK_STATE_WORKING']);
  expect(kinds(mine.updatesFor(text(0, 'Hel', 3)))).toEqual([]);
});

test('model text streams as one artifact per call, appended, each chunk once', () => {
  const updates = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  updates.updatesFor(started);
  const first = updates.updatesFor(text(0, 'Hel'));
  expect(kinds(first)).toEqual(['text-r/1#1:Hel']);
  expect(first[0]!.response).toMatchObject({ artifactUpdate: { append: false } });
  // A heartbeat repeating what was sent, then going on: only the new part.
  const next = updates.updatesFor(text(0, 'Hello'));
  expect(kinds(next)).toEqual(['text-r/1#1:lo']);
  expect(next[0]!.response).toMatchObject({ artifactUpdate: { append: true } });
  expect(decodeCursor(next[0]!.cursor)).toEqual({ seq: 5, run: 2, call: 'r/1#1', textEnd: 5 });
});

test('resumed at a cursor, text already sent is not sent again', () => {
  const updates = new TaskUpdates(ref, {
    afterRun: 1,
    cursor: { seq: 5, run: 2, call: 'r/1#1', textEnd: 3 },
  });
  expect(kinds(updates.updatesFor(text(0, 'Hello')))).toEqual(['text-r/1#1:lo']);
});

test('a decision waited for is input-required and closes the stream; decided, the task works again', () => {
  const updates = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  updates.updatesFor(started);
  const requested: AgentEvent = {
    type: 'approval_requested',
    seq: 6,
    at,
    run: 2,
    toolCallId: 'call_1',
    toolName: 'record',
    args: '{"value":"x"}',
    risk: 'medium',
  };
  const [waiting] = updates.updatesFor(requested, [pending]);
  expect(waiting!.closes).toBe(true);
  expect(waiting!.response).toMatchObject({
    statusUpdate: {
      status: {
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: {
          role: 'ROLE_AGENT',
          parts: [
            { text: expect.stringContaining('record waits') },
            {
              data: {
                kind: 'approval_request',
                toolCallId: 'call_1',
                tool: 'record',
                arguments: '{"value":"x"}',
                argumentsSha256: 'a'.repeat(64),
                risk: 'medium',
              },
            },
          ],
        },
      },
    },
  });
  const decided: AgentEvent = {
    type: 'approval_decided',
    seq: 7,
    at,
    run: 2,
    toolCallId: 'call_1',
    toolName: 'record',
    decision: 'allow_once',
    by: 'desk',
  };
  expect(kinds(updates.updatesFor(decided, []))).toEqual(['TASK_STATE_WORKING']);
});

test('the run’s end is the answer artifact then completed; an end without an answer is failed with why', () => {
  const answered = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  answered.updatesFor(started);
  const end = (outcome: 'answered' | 'max_tool_iterations', answer: string): AgentEvent => ({
    type: 'run_finished',
    seq: 9,
    at,
    run: 2,
    messageIds: ['m1'],
    outcome,
    answer,
  });
  const done = answered.updatesFor(end('answered', 'Hello'));
  expect(kinds(done)).toEqual(['answer:Hello', 'TASK_STATE_COMPLETED']);
  expect(done.map((update) => update.closes)).toEqual([false, true]);
  const failed = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  failed.updatesFor(started);
  const [last] = failed.updatesFor(end('max_tool_iterations', ''));
  expect(last!.response).toMatchObject({
    statusUpdate: {
      status: {
        state: 'TASK_STATE_FAILED',
        message: { parts: [{ text: expect.stringMatching(/tool iterations/) }] },
      },
    },
  });
});

test('resumed after the answer artifact, the run’s end is its final status alone', () => {
  const end: AgentEvent = {
    type: 'run_finished',
    seq: 9,
    at,
    run: 2,
    messageIds: ['m1'],
    outcome: 'answered',
    answer: 'Hello',
  };
  const first = new TaskUpdates(ref, { afterRun: 1, cursor: { seq: 4 } });
  first.updatesFor(started);
  const [answer, completed] = first.updatesFor(end);
  // Two updates of one event, each with a cursor of its own.
  expect(answer!.cursor).not.toBe(completed!.cursor);
  const resumed = new TaskUpdates(ref, { afterRun: 1, cursor: decodeCursor(answer!.cursor)! });
  resumed.updatesFor(started);
  expect(kinds(resumed.updatesFor(end))).toEqual(['TASK_STATE_COMPLETED']);
});
