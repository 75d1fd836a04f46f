import { withUniqueToolCallIds } from '../../src/activities/tool-call-ids';
import { withProviderToolCallIds } from '../../src/activities/models/openai/chat-tool-call-ids';
import { toOpenAiMessages } from '../../src/activities/models/openai/chat-messages';
import type { AssistantMessage, Message, ToolCall } from '../../src/shared/messages';

const FRESH_ID = /^call_[0-9a-f]{24}$/;

const call = (id: string, name = 'read'): ToolCall => ({ type: 'toolCall', id, name, arguments: '{}' });
const reply = (...content: AssistantMessage['content']): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason: 'toolUse',
  model: 'm',
  usage: { inputTokens: 1, outputTokens: 2 },
  timestamp: 5,
});
const resultFor = (toolCallId: string): Message => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read',
  content: [{ type: 'text', text: 'ok' }],
  isError: false,
  timestamp: 1,
});
const ids = (message: AssistantMessage) =>
  message.content.flatMap((block) => (block.type === 'toolCall' ? [block.id] : []));

test('unique ids are kept unchanged', () => {
  const original = reply({ type: 'text', text: 'hi' }, call('call_a'), call('call_b'));
  const out = withUniqueToolCallIds(original, [resultFor('call_x')]);
  expect(out).toEqual(original);
});

test('a missing id gets a fresh call_ id', () => {
  const out = withUniqueToolCallIds(reply(call('')), []);
  expect(ids(out)[0]).toMatch(FRESH_ID);
});

test('an id reused from an earlier tool result gets a fresh one; other fields are kept', () => {
  const out = withUniqueToolCallIds(reply(call('call_0', 'grep')), [resultFor('call_0')]);
  const [block] = out.content;
  expect(block).toMatchObject({ type: 'toolCall', name: 'grep', arguments: '{}' });
  expect(ids(out)[0]).toMatch(FRESH_ID);
  expect(ids(out)[0]).not.toBe('call_0');
});

test('a duplicate id inside one reply: the first keeps it, the second gets a fresh one', () => {
  const out = withUniqueToolCallIds(reply(call('call_0'), call('call_0')), []);
  const [first, second] = ids(out);
  expect(first).toBe('call_0');
  expect(second).toMatch(FRESH_ID);
});

test('several missing ids get distinct fresh ids', () => {
  const out = withUniqueToolCallIds(reply(call(''), call(''), call('')), []);
  const fresh = ids(out);
  expect(new Set(fresh).size).toBe(3);
  for (const id of fresh) expect(id).toMatch(FRESH_ID);
});

test('only tool result ids count as used; user message ids do not', () => {
  const earlier: Message[] = [{ role: 'user', content: 'x', messageId: 'call_u', timestamp: 0 }];
  const out = withUniqueToolCallIds(reply(call('call_u')), earlier);
  expect(ids(out)).toEqual(['call_u']);
});

test('text blocks, order and message fields are preserved and the input is not mutated', () => {
  const original = reply({ type: 'text', text: 'before' }, call('dup'), { type: 'text', text: 'after' });
  const snapshot = structuredClone(original);
  const out = withUniqueToolCallIds(original, [resultFor('dup')]);
  expect(original).toEqual(snapshot);
  expect(out.content.map((block) => block.type)).toEqual(['text', 'toolCall', 'text']);
  expect(out.content[0]).toEqual({ type: 'text', text: 'before' });
  expect(out.content[2]).toEqual({ type: 'text', text: 'after' });
  expect({ ...out, content: [] }).toEqual({ ...original, content: [] });
});

describe('tool call ids as the provider accepts them', () => {
  const transcript: Message[] = [
    { role: 'user', content: 'go', messageId: 'm1', timestamp: 1 },
    reply(call('call_abc123def456'), call('AbCdEfGh1'), call('call_0')),
    resultFor('call_abc123def456'),
    resultFor('AbCdEfGh1'),
    resultFor('call_0'),
  ];
  const wire = toOpenAiMessages(transcript);
  const sentIds = (messages: typeof wire) => ({
    calls: messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])),
    results: messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])),
  });

  test('Mistral gets nine letters and digits, the same for a call and its result, valid ids kept', () => {
    const { calls, results } = sentIds(withProviderToolCallIds(wire, 'mistral'));
    for (const id of calls) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(results).toEqual(calls);
    expect(new Set(calls).size).toBe(3);
    expect(calls[1]).toBe('AbCdEfGh1');
  });

  test('the same transcript is sent with the same ids every time', () => {
    expect(withProviderToolCallIds(wire, 'mistral')).toEqual(withProviderToolCallIds(wire, 'mistral'));
    const longer = toOpenAiMessages([...transcript, reply(call('call_next')), resultFor('call_next')]);
    expect(sentIds(withProviderToolCallIds(longer, 'mistral')).calls.slice(0, 3)).toEqual(
      sentIds(withProviderToolCallIds(wire, 'mistral')).calls,
    );
  });

  test('other providers get the ids unchanged', () => {
    expect(withProviderToolCallIds(wire, 'openai')).toBe(wire);
    expect(withProviderToolCallIds(wire, 'gemini')).toBe(wire);
  });
});
