import type { Message } from '../../src/shared/messages';
import { renderForSummary } from '../../src/activities/summarize-transcript';

const messages: Message[] = [
  { role: 'user', content: 'Fix the build', messageId: 'm1', timestamp: 1 },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Reading the log.' },
      { type: 'toolCall', id: 'c1', name: 'read', arguments: '{"path":"build.log"}' },
    ],
    stopReason: 'toolUse',
    model: 'm',
    timestamp: 2,
  },
  {
    role: 'toolResult',
    toolCallId: 'c1',
    toolName: 'read',
    content: [{ type: 'text', text: 'error TS2304' }],
    isError: true,
    timestamp: 3,
  },
];

test('messages become a plain-text transcript naming the tools called and their results', () => {
  expect(renderForSummary(messages)).toBe(
    [
      'USER: Fix the build',
      'ASSISTANT: Reading the log. [called read({"path":"build.log"})]',
      'TOOL read (error): error TS2304',
    ].join('\n\n'),
  );
});

test('long messages are cut and a long transcript keeps its newest part', () => {
  const long: Message[] = Array.from({ length: 200 }, (_, index) => ({
    role: 'user',
    content: `${index} ${'x'.repeat(5_000)}`,
    messageId: `m${index}`,
    timestamp: index,
  }));
  const text = renderForSummary(long);
  expect(text.length).toBeLessThanOrEqual(400_010);
  expect(text.startsWith('[…]\n')).toBe(true);
  expect(text).toContain('USER: 199 ');
  expect(text).not.toContain('USER: 0 ');
  expect(text).toContain(' […]');
});
