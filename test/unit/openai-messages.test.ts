import { toOpenAiMessages } from '../../src/activities/models/openai/chat-messages';
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../../src/shared/messages';

const user = (content: string): UserMessage => ({ role: 'user', content, messageId: 'm1', timestamp: 1 });
const assistant = (content: AssistantMessage['content']): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason: content.some((block) => block.type === 'toolCall') ? 'toolUse' : 'stop',
  model: 'm',
  timestamp: 2,
});
const toolResult = (toolCallId: string, content: ToolResultMessage['content']): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read',
  content,
  isError: false,
  timestamp: 3,
});

test('a user message becomes a user message', () => {
  expect(toOpenAiMessages([user('hello')])).toEqual([{ role: 'user', content: 'hello' }]);
});

test('images sent with a user message follow its text as image parts', () => {
  const message: UserMessage = {
    ...user('what is this?'),
    images: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }],
  };
  expect(toOpenAiMessages([message])).toEqual([
    {
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    },
  ]);
});

test('the system prompt comes first', () => {
  const out = toOpenAiMessages([user('hi'), assistant([{ type: 'text', text: 'hey' }])], 'Be brief.');
  expect(out[0]).toEqual({ role: 'system', content: 'Be brief.' });
  expect(out.map((message) => message.role)).toEqual(['system', 'user', 'assistant']);
});

test('no system message without a system prompt (or with an empty one)', () => {
  expect(toOpenAiMessages([user('hi')]).map((message) => message.role)).toEqual(['user']);
  expect(toOpenAiMessages([user('hi')], '').map((message) => message.role)).toEqual(['user']);
});

test('an assistant message with text and tool calls', () => {
  const out = toOpenAiMessages([
    assistant([
      { type: 'text', text: 'Let me ' },
      { type: 'toolCall', id: 'call_1', name: 'read', arguments: '{"path":"a"}' },
      { type: 'text', text: 'check.' },
      { type: 'toolCall', id: 'call_2', name: 'glob', arguments: '{"pattern":"*"}' },
    ]),
  ]);
  expect(out).toEqual([
    {
      role: 'assistant',
      content: 'Let me check.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } },
        { id: 'call_2', type: 'function', function: { name: 'glob', arguments: '{"pattern":"*"}' } },
      ],
    },
  ]);
});

test('an assistant message with only tool calls has null content', () => {
  const [message] = toOpenAiMessages([
    assistant([{ type: 'toolCall', id: 'call_1', name: 'read', arguments: '{}' }]),
  ]);
  expect(message).toEqual({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
  });
});

test('an assistant message with only text has no tool_calls key', () => {
  const [message] = toOpenAiMessages([assistant([{ type: 'text', text: 'done' }])]);
  expect(message).toEqual({ role: 'assistant', content: 'done' });
  expect(message).not.toHaveProperty('tool_calls');
});

test('a tool result becomes a tool message with its tool_call_id, blocks joined by newlines', () => {
  const out = toOpenAiMessages([
    toolResult('call_9', [
      { type: 'text', text: 'first' },
      { type: 'text', text: 'second' },
    ]),
  ]);
  expect(out).toEqual([{ role: 'tool', tool_call_id: 'call_9', content: 'first\nsecond' }]);
});

test('images in tool results are named in the tool message and sent as image parts after the results', () => {
  const out = toOpenAiMessages([
    assistant([
      { type: 'toolCall', id: 'call_img', name: 'read', arguments: '{}' },
      { type: 'toolCall', id: 'call_txt', name: 'read', arguments: '{}' },
      { type: 'toolCall', id: 'call_two', name: 'read', arguments: '{}' },
    ]),
    toolResult('call_img', [
      { type: 'text', text: 'screenshot:' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]),
    toolResult('call_txt', [{ type: 'text', text: 'plain' }]),
    toolResult('call_two', [
      { type: 'image', data: '/9j/4AAQ', mimeType: 'image/jpeg' },
      { type: 'image', data: 'R0lGODlh', mimeType: 'image/gif' },
    ]),
    user('next'),
  ]);
  // Tool messages must follow their assistant message directly: the images come after all of them.
  expect(out.map((message) => message.role)).toEqual(['assistant', 'tool', 'tool', 'tool', 'user', 'user']);
  expect(out[1]).toEqual({
    role: 'tool',
    tool_call_id: 'call_img',
    content: 'screenshot:\n[image: image/png, attached below]',
  });
  expect(JSON.stringify(out.slice(0, 4))).not.toContain('iVBORw0KGgo=');
  expect(out[4]).toEqual({
    role: 'user',
    content: [
      { type: 'text', text: 'Image(s) returned by read (call_img):' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      { type: 'text', text: 'Image(s) returned by read (call_two):' },
      { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
      { type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lGODlh' } },
    ],
  });
  expect(out[5]).toEqual({ role: 'user', content: 'next' });
});

test('images at the end of the transcript still reach the model', () => {
  const out = toOpenAiMessages([
    toolResult('call_img', [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]),
  ]);
  expect(out.map((message) => message.role)).toEqual(['tool', 'user']);
});

test('tool results without images add no message', () => {
  const out = toOpenAiMessages([toolResult('call_1', [{ type: 'text', text: 'a' }]), user('b')]);
  expect(out.map((message) => message.role)).toEqual(['tool', 'user']);
});

test('a whole conversation keeps its order', () => {
  const messages: Message[] = [
    user('read a'),
    assistant([{ type: 'toolCall', id: 'c1', name: 'read', arguments: '{"path":"a"}' }]),
    toolResult('c1', [{ type: 'text', text: 'A' }]),
    assistant([{ type: 'text', text: 'It says A.' }]),
    user('thanks'),
  ];
  const out = toOpenAiMessages(messages, 'sys');
  expect(out.map((message) => message.role)).toEqual([
    'system',
    'user',
    'assistant',
    'tool',
    'assistant',
    'user',
  ]);
  expect(out[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'A' });
  expect(out[5]).toEqual({ role: 'user', content: 'thanks' });
});

describe('thinking on assistant messages', () => {
  const thoughtCall = assistant([
    { type: 'thinking', thinking: 'Read it first.' },
    { type: 'text', text: 'Looking.' },
    { type: 'toolCall', id: 'c1', name: 'read', arguments: '{"path":"a"}' },
  ]);
  const thoughtAnswer = assistant([
    { type: 'thinking', thinking: 'Easy.' },
    { type: 'text', text: 'Done.' },
  ]);
  const transcript: Message[] = [
    user('go'),
    thoughtCall,
    toolResult('c1', [{ type: 'text', text: 'content' }]),
    thoughtAnswer,
  ];

  test('is never answer text, and by default is not sent back', () => {
    for (const provider of ['openai', 'gemini', 'mistral'] as const) {
      const sent = toOpenAiMessages(transcript, undefined, provider);
      expect(sent.filter((message) => message.role === 'assistant')).toEqual([
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
        },
        { role: 'assistant', content: 'Done.' },
      ]);
    }
    expect(toOpenAiMessages(transcript)).toEqual(toOpenAiMessages(transcript, undefined, 'openai'));
  });

  test('goes back to DeepSeek as reasoning_content on the turns that called tools only', () => {
    const sent = toOpenAiMessages(transcript, undefined, 'deepseek');
    expect(sent.filter((message) => message.role === 'assistant')).toEqual([
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
        reasoning_content: 'Read it first.',
      },
      { role: 'assistant', content: 'Done.' },
    ]);
  });
});

test("a tool call's thought signature goes back to Gemini only, in extra_content", () => {
  const transcript: Message[] = [
    user('go'),
    assistant([{ type: 'toolCall', id: 'c1', name: 'read', arguments: '{}', thoughtSignature: 'sig' }]),
    toolResult('c1', [{ type: 'text', text: 'content' }]),
  ];
  const call = { id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } };
  expect(toOpenAiMessages(transcript, undefined, 'gemini')[1]).toEqual({
    role: 'assistant',
    content: null,
    tool_calls: [{ ...call, extra_content: { google: { thought_signature: 'sig' } } }],
  });
  for (const provider of ['openai', 'mistral', 'deepseek'] as const) {
    expect(toOpenAiMessages(transcript, undefined, provider)[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [call],
    });
  }
});
