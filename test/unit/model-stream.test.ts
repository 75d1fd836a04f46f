import type OpenAI from 'openai';
import { type PartialAnswer, assembleStream } from '../../src/activities/model-stream';

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
    { text: 'Hel', toolCalls: 0 },
    { text: 'Hello', toolCalls: 0 },
    { text: 'Hello', toolCalls: 1 },
    { text: 'Hello', toolCalls: 1 },
    { text: 'Hello', toolCalls: 2 },
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
