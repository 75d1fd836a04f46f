import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { type ExecutionHistory, buildTimeline } from '../../src/history/build-timeline';
import { TranscriptAtRunError, transcriptAtRun } from '../../src/history/transcript-at-run';
import { type Message, textOf } from '../../src/shared/messages';

// The transcript at the end of a run, taken from recorded histories (test/histories).

const HISTORIES = path.join(__dirname, '..', 'histories');

function execution(name: string, runId = name): ExecutionHistory {
  return {
    runId,
    history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, `${name}.json`), 'utf8'))),
  };
}

function at(run: number, ...executions: ExecutionHistory[]) {
  return transcriptAtRun('conv', executions, run, defaultPayloadConverter);
}

function userTexts(messages: Message[]): string[] {
  return messages.flatMap((message) => (message.role === 'user' ? [message.content] : []));
}

function lastAnswer(messages: Message[]): string {
  const last = messages.at(-1)!;
  if (last.role !== 'assistant') throw new Error(`the last message is a ${last.role} message`);
  return textOf(last);
}

test("a run's transcript ends with its answer, its tool results in between, and the next run adds to it", () => {
  const history = execution('tool-fan-out');
  const first = at(1, history);
  expect(first.runs).toBe(2);
  expect(first.runId).toBe('tool-fan-out');
  expect(userTexts(first.messages)).toEqual(['Look around']);
  expect(first.messages.map((message) => message.role)).toEqual([
    'user',
    'assistant',
    'toolResult',
    'toolResult',
    'toolResult',
    'toolResult',
    'assistant',
  ]);
  expect(lastAnswer(first.messages)).toMatch(/^There is one fil/);

  const second = at(2, history);
  expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
  expect(userTexts(second.messages)).toEqual(['Look around', 'Thanks']);
  expect(lastAnswer(second.messages)).toMatch(/^You are welcome/);
});

test('after compaction, the transcript is the compacted one the workflow held; before it, the whole one', () => {
  const history = execution('compaction');
  expect(userTexts(at(2, history).messages)).toEqual(['Question 1', 'Question 2']);
  const compacted = at(3, history).messages;
  expect(userTexts(compacted)[0]).toMatch(/^\[Summary of the earlier conversation/);
  expect(userTexts(compacted).slice(1)).toEqual(['Question 3']);
});

test('across continue-as-new: a later execution starts from the transcript it was carried', () => {
  const first = execution('continue-as-new-first-run', 'first');
  const last = execution('continue-as-new', 'last');
  const early = at(1, first, last);
  expect(early.runId).toBe('first');
  expect(userTexts(early.messages)).toEqual(['Turn 0']);

  const late = at(5, first, last);
  expect(late.runId).toBe('last');
  expect(userTexts(late.messages)).toEqual(['Turn 0', 'Turn 1', 'Turn 2', 'Turn 3', 'Turn 4']);
  expect(lastAnswer(late.messages)).toBe('Turn 4 done.');
  const started = buildTimeline('conv', [first, last], defaultPayloadConverter).items.filter(
    (item) => item.kind === 'execution_started',
  );
  expect(late.options).toEqual(started.at(-1)!.kind === 'execution_started' && started.at(-1)!.options);

  // Runs 3 and 4 ended in executions these two histories skip.
  expect(() => at(3, first, last)).toThrow('the histories given do not show run 3 of conversation conv');
});

test('runs out of range, and runs that did not end with an answer, are refused saying why', () => {
  const history = execution('tool-fan-out');
  for (const run of [0, 3, 1.5]) {
    expect(() => at(run, history)).toThrow(TranscriptAtRunError);
    expect(() => at(run, history)).toThrow(`run ${run} is out of range: conversation conv has runs 1 to 2`);
  }
  expect(() => at(1, execution('max-tool-iterations'))).toThrow(/did not end with the model's answer/);
});
