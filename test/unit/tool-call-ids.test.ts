import { withUniqueToolCallIds } from '../../src/activities/tool-call-ids';
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
