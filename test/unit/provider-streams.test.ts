import { assembleStream } from '../../src/activities/models/openai/chat-stream';
import { textOf, thinkingOf, toolCallsOf } from '../../src/shared/messages';
import { toOpenAiMessages } from '../../src/activities/models/openai/chat-messages';
import { chunksOf, providerRefusal, providerStreams } from '../support/provider-streams';

async function* streamOf<T>(items: T[]): AsyncIterable<T> {
  for (const item of items) yield item;
}

const assemble = (sse: string) =>
  assembleStream(
    streamOf(chunksOf(sse)),
    () => {},
    () => 1,
  );

const streams = providerStreams();

test('the corpus holds a text answer and a tool call for each of the ten providers', () => {
  expect(streams.filter((stream) => stream.kind === 'text')).toHaveLength(10);
  expect(streams.filter((stream) => stream.kind === 'toolCall')).toHaveLength(10);
  for (const stream of streams) expect(stream.sse.trimEnd().endsWith('data: [DONE]')).toBe(true);
});

describe.each(streams.map((stream) => [`${stream.file} ${stream.kind}`, stream] as const))(
  '%s',
  (_name, stream) => {
    test('assembles to the expected message', async () => {
      const message = await assemble(stream.sse);
      expect(JSON.stringify(message)).not.toContain('[object Object]');
      if (stream.kind === 'text') {
        expect(textOf(message)).toBe(stream.expected.answer);
        expect(thinkingOf(message)).toBe(stream.expected.thinking ?? '');
        expect(toolCallsOf(message)).toEqual([]);
        expect(message.stopReason).toBe('stop');
        if (stream.expected.usage) expect(message.usage).toEqual(stream.expected.usage);
      } else {
        const { id, name, arguments: args, thoughtSignature } = stream.expected;
        expect(toolCallsOf(message)).toEqual([
          { type: 'toolCall', id, name, arguments: args, ...(thoughtSignature ? { thoughtSignature } : {}) },
        ]);
        expect(JSON.parse(toolCallsOf(message)[0]!.arguments)).toEqual(JSON.parse(args));
        expect(textOf(message)).toBe(stream.expected.text ?? '');
        expect(thinkingOf(message)).toBe(stream.expected.thinking ?? '');
        expect(message.stopReason).toBe('toolUse');
      }
      expect(message.model).not.toBe('');
    });
  },
);

test("OpenAI's refusal: the call stops for refusal, in the model's words, none of them the answer's text", async () => {
  const { sse, refusal } = providerRefusal('openai.json');
  const message = await assemble(sse);
  expect(message).toMatchObject({ stopReason: 'refusal', refusal, content: [] });
  expect(message.usage).toMatchObject({ inputTokens: 25, outputTokens: 9 });
  // Sent back, the model reads its refusal as what it answered.
  expect(toOpenAiMessages([message])).toEqual([{ role: 'assistant', content: refusal }]);
});

test('a refusal beside tool calls is no refusal: the calls are the answer', async () => {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const message = await assemble(
    chunk({ role: 'assistant', refusal: 'no' }) +
      chunk(
        { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'read', arguments: '{}' } }] },
        'tool_calls',
      ) +
      'data: [DONE]\n\n',
  );
  expect(message.stopReason).toBe('toolUse');
  expect(message).not.toHaveProperty('refusal');
});
