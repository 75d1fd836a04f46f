import { checkTranscript } from '../../chaos/trials';
import type { Message } from '../../src/shared/messages';

const call = (id: string, name: string): Message =>
  ({
    role: 'assistant',
    content: [{ type: 'toolCall', id, name, arguments: '{}' }],
    timestamp: 0,
  }) as unknown as Message;
const result = (id: string, name: string, text: string, isError = false): Message => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: name,
  content: [{ type: 'text', text }],
  isError,
  timestamp: 0,
});

describe("the chaos run's transcript checks", () => {
  test('every call needs exactly one result', () => {
    expect(checkTranscript([call('a', 'record'), result('a', 'record', 'ok')])).toEqual([]);
    expect(checkTranscript([call('a', 'record')])).toEqual(['a has 0 results']);
    expect(
      checkTranscript([call('a', 'record'), result('a', 'record', 'ok'), result('a', 'record', 'ok')]),
    ).toEqual(['a has 2 results']);
  });

  test("a sub-agent that ran must have answered for its own task; a botched spawn call's error is not checked", () => {
    const spawned = (text: string, isError = false) => [
      call('s', 'sessions_spawn'),
      result('s', 'sessions_spawn', text, isError),
    ];
    expect(checkTranscript(spawned('answered trial-4-sub'), 'trial-4')).toEqual([]);
    expect(checkTranscript(spawned('answered trial-5-sub'), 'trial-4')).toEqual([
      'sub-agent answered: answered trial-5-sub',
    ]);
    expect(checkTranscript(spawned('arguments are not valid JSON', true), 'trial-4')).toEqual([]);
  });
});
