import { reportRunEnd } from '../../src/cli/terminal/follow-run';
import { exitOf } from '../../src/cli/exit-codes';
import { UsageError } from '../../src/cli/usage-error';
import {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  ScheduleMissingError,
  UpdateRefusedError,
} from '../../src/shared/conversation-errors';

test('bad arguments exit 2 with the usage, wrong words or input the client library refuses', () => {
  expect(exitOf(new UsageError('send needs a message'))).toEqual({ code: 2, usage: true });
  expect(exitOf(new InvalidInputError('conversation options', ['unknown key "approval.mod"']))).toEqual({
    code: 2,
    usage: true,
  });
});

test('a conversation that is not there, has ended, exists or refuses exits 1 with its reason, as does anything else', () => {
  for (const error of [
    new ConversationNotFoundError('c-1'),
    new ConversationEndedError('c-1', 'completed'),
    new ConversationExistsError('c-1'),
    new UpdateRefusedError('c-1', 'abort', 'no run is in progress'),
    new ScheduleMissingError('s-1'),
    new Error('no Temporal server on 127.0.0.1:7233'),
  ]) {
    expect(exitOf(error)).toEqual({ code: 1, usage: false });
  }
});

test('the errors say what was wrong in their messages and their fields', () => {
  const invalid = new InvalidInputError('abort', ['unknown key "force"', 'reason: too long']);
  expect(invalid.message).toBe('invalid abort: unknown key "force"; reason: too long');
  expect(invalid.problems).toEqual(['unknown key "force"', 'reason: too long']);
  expect(new ConversationExistsError('c-1').message).toBe('conversation c-1 already exists');
});

test("a run its model's provider refused exits 1, saying so in the provider's words on stderr", () => {
  const written: string[] = [];
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const end = (refusal?: string) => ({
      how: 'finished' as const,
      from: 'events' as const,
      event: {
        type: 'run_finished' as const,
        seq: 4,
        at: 0,
        run: 1,
        messageIds: ['m'],
        outcome: 'refused' as const,
        answer: '',
        ...(refusal !== undefined ? { refusal } : {}),
      },
    });
    expect(
      reportRunEnd(
        'conv-1',
        { end: end('Declined: it could enable cyber harm.'), answerShown: false },
        false,
      ),
    ).toBe(1);
    expect(reportRunEnd('conv-1', { end: end(), answerShown: false }, false)).toBe(1);
  } finally {
    stderr.mockRestore();
  }
  expect(written.join('')).toContain(
    "the model's provider refused to answer: Declined: it could enable cyber harm.; the conversation takes the next message",
  );
  expect(written.join('')).toContain("the model's provider refused to answer (it gave no reason)");
});
