import type OpenAI from 'openai';
import type { PartialAnswer } from '../../src/activities/models/model-wire';
import { assembleStream } from '../../src/activities/models/openai/chat-stream';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type Delta = Chunk['choices'][number]['delta'];
type FinishReason = Chunk['choices'][number]['finish_reason'];

function chunk(delta: Delta, finishReason: FinishReason = null, model = 'test-model'): Chunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
  };
}

function usageChunk(prompt: number, completion: number): Chunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}

async function* streamOf(chunks: Chunk[]): AsyncIterable<Chunk> {
  for (const item of chunks) yield item;
}

const now = () => 1_234;
const assemble = (chunks: Chunk[], onPartial: (partial: PartialAnswer) => void = () => {}) =>
  assembleStream(streamOf(chunks), onPartial, now);

test('text deltas are joined into one text block', async () => {
  const message = await assemble([
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Hello' }),
    chunk({ content: ', ' }),
    chunk({ content: 'world' }),
    chunk({}, 'stop'),
  ]);
  expect(message).toEqual({
    role: 'assistant',
    content: [{ type: 'text', text: 'Hello, world' }],
    stopReason: 'stop',
    model: 'test-model',
    usage: undefined,
    timestamp: 1_234,
  });
});

test('a tool call split across chunks is assembled', async () => {
  const message = await assemble([
    chunk({
      tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'th": "a.txt"' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '}' } }] }),
    chunk({}, 'tool_calls'),
  ]);
  expect(message.content).toEqual([
    { type: 'toolCall', id: 'call_1', name: 'read', arguments: '{"path": "a.txt"}' },
  ]);
  expect(message.stopReason).toBe('toolUse');
});

test('two interleaved tool calls are gathered by index, with preceding text', async () => {
  const message = await assemble([
    chunk({ content: 'Let me look.' }),
    chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'read', arguments: '{"path":' } }] }),
    chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'glob', arguments: '{"pat' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"x.txt"}' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: 'tern":"*.ts"}' } }] }),
    chunk({}, 'tool_calls'),
  ]);
  expect(message.content).toEqual([
    { type: 'text', text: 'Let me look.' },
    { type: 'toolCall', id: 'call_a', name: 'read', arguments: '{"path":"x.txt"}' },
    { type: 'toolCall', id: 'call_b', name: 'glob', arguments: '{"pattern":"*.ts"}' },
  ]);
  expect(message.stopReason).toBe('toolUse');
});

test('tool calls are ordered by index, not by arrival', async () => {
  const message = await assemble([
    chunk({ tool_calls: [{ index: 1, id: 'second', function: { name: 'b', arguments: '{}' } }] }),
    chunk({ tool_calls: [{ index: 0, id: 'first', function: { name: 'a', arguments: '{}' } }] }),
  ]);
  expect(message.content.map((block) => (block.type === 'toolCall' ? block.id : block.type))).toEqual([
    'first',
    'second',
  ]);
});

test('several tool calls in one chunk are all kept', async () => {
  const message = await assemble([
    chunk({
      tool_calls: [
        { index: 0, id: 'c0', function: { name: 'x', arguments: '{"a":1}' } },
        { index: 1, id: 'c1', function: { name: 'y', arguments: '{"b":2}' } },
      ],
    }),
  ]);
  expect(message.content).toEqual([
    { type: 'toolCall', id: 'c0', name: 'x', arguments: '{"a":1}' },
    { type: 'toolCall', id: 'c1', name: 'y', arguments: '{"b":2}' },
  ]);
});

test('a tool call without text has no empty text block', async () => {
  const message = await assemble([
    chunk({ content: '' }),
    chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'x', arguments: '{}' } }] }),
  ]);
  expect(message.content).toHaveLength(1);
  expect(message.content[0]!.type).toBe('toolCall');
});

test.each<[FinishReason, string]>([
  ['stop', 'stop'],
  ['length', 'length'],
  ['content_filter', 'contentFilter'],
  [null, 'stop'],
])('finish_reason %s gives stopReason %s', async (finishReason, stopReason) => {
  const message = await assemble([chunk({ content: 'partial' }), chunk({}, finishReason)]);
  expect(message.stopReason).toBe(stopReason);
});

test('the finish reason is kept when later chunks carry none', async () => {
  const message = await assemble([chunk({ content: 'cut' }, 'length'), chunk({}, null), usageChunk(1, 2)]);
  expect(message.stopReason).toBe('length');
});

test('usage is captured from a final chunk with no choices', async () => {
  const message = await assemble([chunk({ content: 'hi' }), chunk({}, 'stop'), usageChunk(17, 5)]);
  expect(message.usage).toEqual({ inputTokens: 17, outputTokens: 5 });
  expect(message.content).toEqual([{ type: 'text', text: 'hi' }]);
});

test('the model is taken from the first chunk that names one', async () => {
  const message = await assemble([
    chunk({ content: 'a' }, null, ''),
    chunk({ content: 'b' }, null, 'real-model'),
  ]);
  expect(message.model).toBe('real-model');
});

test('onPartial reports the growing text and tool-call count for each chunk with a choice', async () => {
  const partials: PartialAnswer[] = [];
  await assemble(
    [
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'x', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'd', function: { name: 'y', arguments: '{}' } }] }),
      usageChunk(1, 1),
    ],
    (partial) => partials.push({ ...partial }),
  );
  expect(partials).toEqual([
    { text: 'Hel', toolCalls: 0, thinkingLength: 0 },
    { text: 'Hello', toolCalls: 0, thinkingLength: 0 },
    { text: 'Hello', toolCalls: 1, thinkingLength: 0 },
    { text: 'Hello', toolCalls: 1, thinkingLength: 0 },
    { text: 'Hello', toolCalls: 2, thinkingLength: 0 },
  ]);
});

test('an empty stream gives an empty stop message', async () => {
  const message = await assemble([]);
  expect(message).toEqual({
    role: 'assistant',
    content: [],
    stopReason: 'stop',
    model: '',
    usage: undefined,
    timestamp: 1_234,
  });
});

// Deltas as providers other than OpenAI send them (see test/fixtures/provider-streams/README.md);
// outside OpenAI's types, so built loosely.
const loose = (delta: Record<string, unknown>, finishReason: FinishReason = null) =>
  chunk(delta as Delta, finishReason);

test('tool calls without an index: a new id starts a call, a piece without one continues the last', async () => {
  const message = await assemble([
    loose({ tool_calls: [{ id: 'a', function: { name: 'read', arguments: '{"pa' } }] }),
    loose({ tool_calls: [{ function: { arguments: 'th":"x"}' } }] }),
    loose({ tool_calls: [{ id: 'b', function: { name: 'glob', arguments: '{"pattern":"*"}' } }] }),
    loose({ tool_calls: [{ id: 'b', function: { arguments: '' } }] }),
  ]);
  expect(message.content).toEqual([
    { type: 'toolCall', id: 'a', name: 'read', arguments: '{"path":"x"}' },
    { type: 'toolCall', id: 'b', name: 'glob', arguments: '{"pattern":"*"}' },
  ]);
});

test('several tool calls without an index in one chunk are kept apart by their ids', async () => {
  const message = await assemble([
    loose({
      tool_calls: [
        { id: 'a', function: { name: 'x', arguments: '{"a":1}' } },
        { id: 'b', function: { name: 'y', arguments: '{"b":2}' } },
      ],
    }),
  ]);
  expect(message.content.map((block) => (block.type === 'toolCall' ? block.id : ''))).toEqual(['a', 'b']);
});

test('an index starting at 1 is as good as one starting at 0', async () => {
  const message = await assemble([
    chunk({ tool_calls: [{ index: 1, id: 'c1', function: { name: 'x', arguments: '{"a"' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: ':1}' } }] }),
    chunk({ tool_calls: [{ index: 2, id: 'c2', function: { name: 'y', arguments: '{}' } }] }),
  ]);
  expect(message.content).toEqual([
    { type: 'toolCall', id: 'c1', name: 'x', arguments: '{"a":1}' },
    { type: 'toolCall', id: 'c2', name: 'y', arguments: '{}' },
  ]);
});

test('a tool call with no arguments at all gets an empty object', async () => {
  const message = await assemble([
    chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'now', arguments: '' } }] }),
    chunk({}, 'tool_calls'),
  ]);
  expect(message.content).toEqual([{ type: 'toolCall', id: 'c', name: 'now', arguments: '{}' }]);
});

test('an empty first chunk and a role-only delta change nothing', async () => {
  const empty: Chunk = { ...chunk({}), choices: [] };
  const message = await assemble([empty, chunk({ role: 'assistant' }), chunk({ content: 'Hi' })]);
  expect(message.content).toEqual([{ type: 'text', text: 'Hi' }]);
});

test('reasoning_content and reasoning are thinking, kept before the answer and out of it', async () => {
  const partials: PartialAnswer[] = [];
  const message = await assemble(
    [
      loose({ reasoning_content: 'Let me ' }),
      loose({ reasoning: 'think.' }),
      loose({ content: 'Answer.', reasoning_content: null, reasoning: null }),
    ],
    (partial) => partials.push({ ...partial }),
  );
  expect(message.content).toEqual([
    { type: 'thinking', thinking: 'Let me think.' },
    { type: 'text', text: 'Answer.' },
  ]);
  expect(partials.map((partial) => [partial.text, partial.thinkingLength])).toEqual([
    ['', 7],
    ['', 13],
    ['Answer.', 13],
  ]);
});

test('typed content parts: text parts are the answer, thinking parts (nested or plain) are not', async () => {
  const message = await assemble([
    loose({ content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'Hmm.' }] }] }),
    loose({
      content: [
        { type: 'thinking', thinking: ' Yes.' },
        { type: 'text', text: 'It is ' },
      ],
    }),
    loose({
      content: [
        { type: 'reference', reference_ids: [1] },
        { type: 'text', text: 'so.' },
      ],
    }),
  ]);
  expect(message.content).toEqual([
    { type: 'thinking', thinking: 'Hmm. Yes.' },
    { type: 'text', text: 'It is so.' },
  ]);
});

test("usage inside Groq's x_groq is taken when the chunk has none of its own", async () => {
  const last = { ...chunk({}, 'stop'), x_groq: { usage: { prompt_tokens: 3, completion_tokens: 4 } } };
  const message = await assemble([chunk({ content: 'hi' }), last as Chunk]);
  expect(message.usage).toEqual({ inputTokens: 3, outputTokens: 4 });
});

test("Gemini's thought signature is kept on its call, also when it comes in a piece of its own", async () => {
  const signed = (signature: string) => ({ google: { thought_signature: signature } });
  const message = await assemble([
    loose({
      tool_calls: [{ id: 'a', function: { name: 'x', arguments: '{}' }, extra_content: signed('s1') }],
    }),
    loose({ tool_calls: [{ id: 'b', function: { name: 'y', arguments: '{}' } }] }),
    loose({ tool_calls: [{ extra_content: signed('s2') }] }),
    loose({ tool_calls: [{ id: 'c', function: { name: 'z', arguments: '{}' } }] }),
  ]);
  expect(message.content).toEqual([
    { type: 'toolCall', id: 'a', name: 'x', arguments: '{}', thoughtSignature: 's1' },
    { type: 'toolCall', id: 'b', name: 'y', arguments: '{}', thoughtSignature: 's2' },
    { type: 'toolCall', id: 'c', name: 'z', arguments: '{}' },
  ]);
});
