import { defaultPayloadConverter } from '@temporalio/common';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { summarizeHistoryEvent } from '../../src/history/history-event-summary';
import { parseNondeterminism } from '../../src/history/nondeterminism';

/** The SDK's message around Core's sentence, as a DeterminismViolationError carries it. */
const wrapped = (sentence: string) =>
  'Replay failed with a nondeterminism error. This means that the workflow code as written is not compatible with the history that was fed in. ' +
  `Details: Workflow activation completion failed: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: ${sentence}", source: "", stack_trace: "", encoded_attributes: None, cause: None }), force_cause: NonDeterministicError }`;

test('a command the code issued where history has another event: which event, and what the code did', () => {
  expect(
    parseNondeterminism(
      wrapped('Timer machine does not handle this event: HistoryEvent(id: 6, ActivityTaskScheduled)'),
    ),
  ).toEqual({
    detail: 'Timer machine does not handle this event: HistoryEvent(id: 6, ActivityTaskScheduled)',
    eventId: 6,
    recorded: 'ActivityTaskScheduled',
    expected: 'the workflow code issued a timer command here',
  });
});

test('no command where history has an event (the sentence may break before the event)', () => {
  expect(
    parseNondeterminism(
      wrapped('No command scheduled for event \nHistoryEvent(id: 18, ActivityTaskScheduled)'),
    ),
  ).toMatchObject({
    detail: 'No command scheduled for event HistoryEvent(id: 18, ActivityTaskScheduled)',
    eventId: 18,
    recorded: 'ActivityTaskScheduled',
    expected: expect.stringMatching(/issued no command/),
  });
  expect(
    parseNondeterminism(
      '[TMPRL1100] Nondeterminism error: No command scheduled for event HistoryEvent(WorkflowExecutionUpdateAccepted)',
    ),
  ).toMatchObject({
    recorded: 'WorkflowExecutionUpdateAccepted',
  });
});

test('an activity of another type or id than history recorded', () => {
  expect(
    parseNondeterminism(
      wrapped(
        "Activity type of scheduled event 'listToolz' does not match activity type of activity command 'listTools'",
      ),
    ),
  ).toEqual({
    detail:
      "Activity type of scheduled event 'listToolz' does not match activity type of activity command 'listTools'",
    recorded: 'activity listToolz',
    expected: 'the workflow code scheduled activity listTools',
  });
  expect(
    parseNondeterminism(
      wrapped("Activity id of scheduled event '7' does not match activity id of activity command '1'"),
    ),
  ).toMatchObject({
    recorded: 'activity id 7',
    expected: 'the workflow code scheduled activity id 1',
  });
});

test('other failures are not nondeterminism', () => {
  expect(parseNondeterminism('Replay failed due workflow task failure. Details: boom')).toBeUndefined();
  expect(parseNondeterminism('Nondeterminism, said differently')).toEqual({
    detail: 'Nondeterminism, said differently',
  });
});

test("the event replay stopped at, with its attributes' values", () => {
  const history = historyFromJSON(
    JSON.parse(readFileSync(path.join(__dirname, '..', 'histories', 'tool-fan-out.json'), 'utf8')),
  );
  const event = summarizeHistoryEvent(history, 18, defaultPayloadConverter);
  expect(event).toMatchObject({
    eventId: 18,
    type: 'ActivityTaskScheduled',
    at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    attributes: {
      activityId: '3',
      activityType: { name: 'runTool' },
      input: [expect.objectContaining({ toolCallId: 'call_list', toolName: 'list_directory' })],
    },
  });
  expect(summarizeHistoryEvent(history, 9_999, defaultPayloadConverter)).toBeUndefined();
});
