import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { ExecutionHistory } from '../../src/history/build-timeline';
import { formatStateAtRun } from '../../src/history/format-state-at-run';
import { type StateAtRun, stateAtRun } from '../../src/history/state-at-run';
import { TranscriptAtRunError } from '../../src/history/transcript-at-run';

// `history --at N`: a run from inside, taken from recorded histories (test/histories).

function recorded(name: string): ExecutionHistory[] {
  const file = path.join(__dirname, '..', 'histories', `${name}.json`);
  return [{ runId: name, history: historyFromJSON(JSON.parse(readFileSync(file, 'utf8'))) }];
}

const roles = (messages: Array<{ role: string }>) => messages.map((message) => message.role);

test('each model call of the run with the transcript it was sent, the tools offered and its answer', () => {
  const state = stateAtRun('conv', recorded('tool-fan-out'), 1, defaultPayloadConverter);
  expect(state).toMatchObject({ run: 1, runs: 2, runId: 'tool-fan-out', options: { maxToolIterations: 20 } });
  expect(
    state.modelCalls.map((call) => [
      call.iteration,
      roles(call.messages),
      call.answer?.role === 'assistant' && call.answer.stopReason,
    ]),
  ).toEqual([
    [1, ['user'], 'toolUse'],
    [2, ['user', 'assistant', 'toolResult', 'toolResult', 'toolResult', 'toolResult'], 'stop'],
  ]);
  expect(state.modelCalls[0]!.toolNames).toEqual([
    'read',
    'write',
    'edit',
    'list_directory',
    'grep',
    'glob',
    'exec',
  ]);
  expect(state.modelCalls[0]).toMatchObject({
    model: 'scripted-model',
    usage: { inputTokens: 10, outputTokens: 5 },
  });
  expect(state.approvals).toEqual([]);
  const text = formatStateAtRun(state);
  expect(text).toContain(
    'Model call 2 (scripted-model, completed, 10 in / 5 out tokens; execution 1, event 27)',
  );
  expect(text).toContain('  [3] tool list_directory: notes.txt');
  expect(text).toContain('  → assistant: There is one file, notes.txt.');
});

test("the decisions asked for in the run, with the options of the run's execution", () => {
  const state = stateAtRun('conv', recorded('approval'), 1, defaultPayloadConverter);
  expect(state.options).toMatchObject({ approval: { approvers: ['alice', 'bob'] } });
  expect(state.approvals).toEqual([
    { toolCallId: 'call_write_a', toolName: 'write', decision: 'allow_always', by: 'alice' },
  ]);
});

test('after compaction the model was given the summary, not the messages it replaced', () => {
  const state = stateAtRun('conv', recorded('compaction'), 3, defaultPayloadConverter);
  const [call] = state.modelCalls;
  expect(call!.messages.map((message) => (message.role === 'user' ? message.content : message.role))).toEqual(
    [
      '[Summary of the earlier conversation, which was compacted]\nThe user asked for long answers and got them.',
      'Question 3',
    ],
  );
});

test('a run out of range is refused, saying which runs there are', () => {
  expect(() => stateAtRun('conv', recorded('approval'), 4, defaultPayloadConverter)).toThrow(
    new TranscriptAtRunError('run 4 is out of range: conversation conv has runs 1 to 3'),
  );
});

test('recorded: an approval mode set between runs, a message with an image, a fork, and a rerun served from its recording', () => {
  const mode = stateAtRun('conv', recorded('approval-mode'), 2, defaultPayloadConverter);
  expect(mode.approvalMode).toBe('auto');
  expect(stateAtRun('conv', recorded('approval-mode'), 1, defaultPayloadConverter)).toMatchObject({
    approvals: [{ toolCallId: 'call_mode_ask', toolName: 'exec', decision: 'allow_once', by: 'alice' }],
  });
  expect(mode.approvals).toEqual([]);

  const [withImage] = stateAtRun('conv', recorded('images'), 1, defaultPayloadConverter).modelCalls;
  expect(withImage!.messages[0]).toMatchObject({
    role: 'user',
    content: 'What is in this picture?',
    images: [{ type: 'image', mimeType: 'image/png' }],
  });

  // The fork's first run is its original's run 1, carried; its own run is run 2.
  const fork = stateAtRun('conv', recorded('fork'), 2, defaultPayloadConverter);
  expect(fork.modelCalls[0]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);

  const rerun = stateAtRun('conv', recorded('rerun'), 1, defaultPayloadConverter);
  const results = rerun.modelCalls[1]!.messages.filter((message) => message.role === 'toolResult');
  expect(results.map((message) => [message.toolName, message.isError])).toEqual([
    ['read', false],
    ['list_directory', true],
  ]);
  expect(JSON.stringify(results[0]!.content)).toContain('the recorded milk');
  expect(JSON.stringify(results[1]!.content)).toContain('not recorded');
});

test('model and tool text is shown without what a terminal acts on: escapes, a carriage return, C1 controls, bidi overrides, a sequence cut at the line end', () => {
  const ESC = '\x1b';
  const clipboard = `${ESC}]52;c;${'QUFB'.repeat(80)}\x07`;
  const hostile = (words: string) => `${ESC}[2J${words}\rhidden\u202Eevil${ESC}[31m red\x9b1m`;
  const state: StateAtRun = {
    conversationId: 'conv',
    run: 1,
    runs: 1,
    runId: 'run-1',
    options: { systemPrompt: 'be \u202Ekind' },
    modelCalls: [
      {
        iteration: 1,
        execution: 1,
        eventId: 5,
        outcome: 'completed',
        model: `model${ESC}]0;title\x07`,
        toolNames: ['read'],
        messages: [
          { role: 'user', content: hostile('Read it'), messageId: 'm1', timestamp: 0 },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: hostile('Reading') },
              { type: 'toolCall', id: 'call_1', name: 'read', arguments: `{"path":"a${ESC}[8mb"}` },
            ],
            stopReason: 'toolUse',
            model: 'm',
            timestamp: 0,
          },
          {
            role: 'toolResult',
            toolCallId: 'call_1',
            toolName: 'read',
            content: [{ type: 'text', text: `${clipboard}file text` }],
            isError: false,
            timestamp: 0,
          },
        ],
        answer: {
          role: 'assistant',
          // The clipboard write crosses the point where the line is cut.
          content: [{ type: 'text', text: `${'x'.repeat(150)}${clipboard} done` }],
          stopReason: 'stop',
          model: 'm',
          timestamp: 0,
        },
      },
    ],
    approvals: [{ toolCallId: 'call_1', toolName: 'read', decision: 'allow_once', by: `alice${ESC}[2K` }],
  };
  const text = formatStateAtRun(state);
  for (const unprintable of [ESC, '\r', '\u202E', '\x9b', '\x07']) expect(text).not.toContain(unprintable);
  expect(text).not.toContain('52;c;');
  expect(text).not.toContain('QUFB');
  expect(text).toContain('  [1] user: Read it hiddenevil red1m');
  expect(text).toContain('  [2] assistant: Reading hiddenevil red1m [calls read {"path":"ab"}]');
  expect(text).toContain('  [3] tool read: file text');
  expect(text).toContain(`  → assistant: ${'x'.repeat(150)} done`);
  expect(text).toContain('Model call 1 (model, completed');
  expect(text).toContain('  call_1 (read): allow_once by alice');
});
