import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import { toAnthropicMessages } from '../../src/activities/models/anthropic/anthropic-messages';
import {
  type AnthropicStreamEvent,
  assembleAnthropicStream,
} from '../../src/activities/models/anthropic/anthropic-stream';
import { anthropicFailureOf } from '../../src/activities/models/anthropic/anthropic-failures';
import { anthropicWire } from '../../src/activities/models/anthropic/anthropic-wire';
import { classifyModelError, modelErrorKind } from '../../src/activities/models/model-failures';
import type { PartialAnswer } from '../../src/activities/models/model-wire';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/shared/messages';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'anthropic-messages');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), 'utf8');

interface Received {
  headers: http.IncomingHttpHeaders;
  url: string | undefined;
  body: Record<string, unknown> & {
    messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
  };
}

/** An endpoint serving one recorded stream per request, in order, and keeping what it was sent. */
async function endpoint(streams: string[]) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (piece: string) => (body += piece));
    request.on('end', () => {
      received.push({
        headers: request.headers,
        url: request.url,
        body: JSON.parse(body) as Received['body'],
      });
      const stream = streams[received.length - 1];
      if (stream === undefined) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'no more streams' } }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new Anthropic({
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKey: 'x',
    maxRetries: 0,
  });
  return {
    client,
    received,
    close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))),
  };
}

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'list_dir',
      description: 'Lists a directory.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Reads a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

const SIGNATURE_1 = 'EqQBCgIYAhIMzC7QxNqk1PhXbLbAGgwvbQ5s1x3bH9GxEiIwKwSeQv3TjVh2Bqq6rZ1wJhMv';
const SIGNATURE_2 = 'EuYBCkQYAiJAfQ3vQ9c1Yb6tTn2M0hRr3xq7Jm0yF2Kk8w9pLz5vGd1cHs4BnWq6eUo';
const CALL_1 = 'toolu_01T1x1fJ34qAmk2tNTrN7Up6';
const CALL_2 = 'toolu_01GpWc9vnKqJ2rXy4dL8zQm3';

const toolResult = (toolCallId: string, text: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read_file',
  content: [{ type: 'text', text }],
  isError: false,
  timestamp: 2,
});

/** Every `cache_control` in a request body, by where it is. */
function cacheBreakpoints(value: unknown, at = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => cacheBreakpoints(item, `${at}[${index}]`));
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) =>
    key === 'cache_control' ? [at] : cacheBreakpoints(item, `${at}.${key}`),
  );
}

test('a tool loop of three calls: thinking goes back signed before its tool use, results answer the calls, the prefix is cached', async () => {
  const model = await endpoint([
    fixture('tool-loop-1.sse'),
    fixture('tool-loop-2.sse'),
    fixture('tool-loop-3.sse'),
  ]);
  try {
    const wire = anthropicWire(model.client, { thinkingBudgetTokens: 4096 });
    const transcript: Message[] = [
      { role: 'user', content: 'What does notes.txt say?', messageId: 'm1', timestamp: 1 },
    ];
    const partials: PartialAnswer[] = [];
    const call = () =>
      wire.open({
        model: 'claude-sonnet-4-6',
        provider: 'openai',
        systemPrompt: 'You are terse.',
        messages: transcript,
        tools: TOOLS,
      })(
        new AbortController().signal,
        (partial) => partials.push(partial),
        () => 42,
      );

    const first = await call();
    expect(first).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'The user asks what notes.txt says. I should read the file first.',
          signature: SIGNATURE_1,
        },
        { type: 'toolCall', id: CALL_1, name: 'read_file', arguments: '{"path": "notes.txt"}' },
      ],
      stopReason: 'toolUse',
      model: 'claude-sonnet-4-6',
      usage: { inputTokens: 412 + 1850, outputTokens: 96, cachedInputTokens: 0, cacheWriteTokens: 1850 },
      timestamp: 42,
    });
    expect(partials.at(-1)).toEqual({ text: '', toolCalls: 1, thinkingLength: 64 });
    transcript.push(first, toolResult(CALL_1, 'See todo.txt.'));

    const second = await call();
    expect(second).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'notes.txt points to todo.txt; read that too.',
          signature: SIGNATURE_2,
        },
        { type: 'toolCall', id: CALL_2, name: 'read_file', arguments: '{"path": "todo.txt"}' },
      ],
      stopReason: 'toolUse',
      model: 'claude-sonnet-4-6',
      usage: {
        inputTokens: 88 + 530 + 1850,
        outputTokens: 71,
        cachedInputTokens: 1850,
        cacheWriteTokens: 530,
      },
      timestamp: 42,
    });
    transcript.push(second, toolResult(CALL_2, '- buy milk'));

    partials.length = 0;
    const third = await call();
    expect(third).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [{ type: 'text', text: 'notes.txt points to todo.txt, which lists one thing: buy milk.' }],
      stopReason: 'stop',
      model: 'claude-sonnet-4-6',
      usage: {
        inputTokens: 64 + 120 + 2380,
        outputTokens: 25,
        cachedInputTokens: 2380,
        cacheWriteTokens: 120,
      },
      timestamp: 42,
    });
    expect(partials.map((partial) => partial.text)).toContain('notes.txt points to todo.txt, ');

    expect(model.received).toHaveLength(3);
    for (const { headers, url, body } of model.received) {
      expect(url).toBe('/v1/messages');
      expect(headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(body).toMatchObject({
        model: 'claude-sonnet-4-6',
        max_tokens: 8192,
        stream: true,
        thinking: { type: 'enabled', budget_tokens: 4096 },
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      });
      expect(body.tools).toEqual([
        {
          name: 'list_dir',
          description: 'Lists a directory.',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        },
        {
          name: 'read_file',
          description: 'Reads a file.',
          input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          cache_control: { type: 'ephemeral' },
        },
      ]);
      // The system prompt, the last tool, the last block of the last message: three of the four allowed.
      const lastMessage = body.messages.length - 1;
      const lastBlock = body.messages[lastMessage]!.content.length - 1;
      expect(cacheBreakpoints(body).sort()).toEqual(
        ['$.system[0]', '$.tools[1]', `$.messages[${lastMessage}].content[${lastBlock}]`].sort(),
      );
    }

    const [one, two, three] = model.received.map((request) => request.body.messages);
    const ephemeral = { cache_control: { type: 'ephemeral' } };
    const question = { role: 'user', content: [{ type: 'text', text: 'What does notes.txt say?' }] };
    const firstTurn = {
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'The user asks what notes.txt says. I should read the file first.',
          signature: SIGNATURE_1,
        },
        { type: 'tool_use', id: CALL_1, name: 'read_file', input: { path: 'notes.txt' } },
      ],
    };
    const secondTurn = {
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: 'notes.txt points to todo.txt; read that too.',
          signature: SIGNATURE_2,
        },
        { type: 'tool_use', id: CALL_2, name: 'read_file', input: { path: 'todo.txt' } },
      ],
    };
    const firstResult = {
      type: 'tool_result',
      tool_use_id: CALL_1,
      content: [{ type: 'text', text: 'See todo.txt.' }],
    };
    const secondResult = {
      type: 'tool_result',
      tool_use_id: CALL_2,
      content: [{ type: 'text', text: '- buy milk' }],
    };

    expect(one).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What does notes.txt say?', ...ephemeral }] },
    ]);
    expect(two).toEqual([question, firstTurn, { role: 'user', content: [{ ...firstResult, ...ephemeral }] }]);
    expect(three).toEqual([
      question,
      firstTurn,
      { role: 'user', content: [firstResult] },
      secondTurn,
      { role: 'user', content: [{ ...secondResult, ...ephemeral }] },
    ]);
  } finally {
    await model.close();
  }
});

test('no system prompt, no tools and no thinking budget: none of them is sent', async () => {
  const model = await endpoint([fixture('tool-loop-3.sse')]);
  try {
    await anthropicWire(model.client, { maxTokens: 1000 }).open({
      model: 'claude-haiku-4-5',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi', messageId: 'm', timestamp: 1 }],
      tools: [],
    })(
      new AbortController().signal,
      () => {},
      () => 1,
    );
    const { body } = model.received[0]!;
    expect(body).toEqual({
      model: 'claude-haiku-4-5',
      max_tokens: 1000,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
      ],
      stream: true,
    });
  } finally {
    await model.close();
  }
});

test('max_tokens leaves the answer room beyond a thinking budget as large as the limit', async () => {
  const model = await endpoint([fixture('tool-loop-3.sse')]);
  try {
    await anthropicWire(model.client, { maxTokens: 2000, thinkingBudgetTokens: 16_000 }).open({
      model: 'claude-haiku-4-5',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi', messageId: 'm', timestamp: 1 }],
      tools: [],
    })(
      new AbortController().signal,
      () => {},
      () => 1,
    );
    expect(model.received[0]!.body).toMatchObject({
      max_tokens: 16_000 + 8192,
      thinking: { type: 'enabled', budget_tokens: 16_000 },
    });
  } finally {
    await model.close();
  }
});

test('an error event in the stream fails the call with the SDK error, classified retryable when overloaded', async () => {
  const overloaded =
    fixture('tool-loop-3.sse').split('event: content_block_start')[0] +
    'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
  const model = await endpoint([overloaded]);
  try {
    const error = await anthropicWire(model.client)
      .open({
        model: 'claude-sonnet-4-6',
        provider: 'openai',
        messages: [{ role: 'user', content: 'hi', messageId: 'm', timestamp: 1 }],
        tools: [],
      })(
        new AbortController().signal,
        () => {},
        () => 1,
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const failure = classifyModelError(error, anthropicFailureOf);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'ModelUnavailable', nonRetryable: false });
    expect((failure as ApplicationFailure).message).toContain('Overloaded');
    expect(modelErrorKind(error, anthropicFailureOf)).toBe('unavailable');
  } finally {
    await model.close();
  }
});

describe('assembleAnthropicStream', () => {
  async function* streamOf(events: AnthropicStreamEvent[]): AsyncIterable<AnthropicStreamEvent> {
    for (const event of events) yield event;
  }

  const start = (usage: Partial<Anthropic.Usage> = {}) =>
    ({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-haiku-4-5',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          ...usage,
        },
      },
    }) as unknown as AnthropicStreamEvent;
  const blockStart = (index: number, content_block: Record<string, unknown>) =>
    ({ type: 'content_block_start', index, content_block }) as unknown as AnthropicStreamEvent;
  const delta = (index: number, piece: Record<string, unknown>) =>
    ({ type: 'content_block_delta', index, delta: piece }) as unknown as AnthropicStreamEvent;
  const stop = (index: number): AnthropicStreamEvent => ({ type: 'content_block_stop', index });
  const end = (stop_reason: string, output_tokens: number): AnthropicStreamEvent[] => [
    {
      type: 'message_delta',
      delta: { stop_reason, stop_sequence: null },
      usage: { output_tokens },
    } as unknown as AnthropicStreamEvent,
    { type: 'message_stop' },
  ];

  const assemble = (events: AnthropicStreamEvent[], onPartial: (partial: PartialAnswer) => void = () => {}) =>
    assembleAnthropicStream(streamOf(events), onPartial, () => 7);

  test('text only', async () => {
    const partials: PartialAnswer[] = [];
    const message = await assemble(
      [
        start(),
        { type: 'ping' },
        blockStart(0, { type: 'text', text: '' }),
        delta(0, { type: 'text_delta', text: 'Hello' }),
        delta(0, { type: 'text_delta', text: ', world.' }),
        stop(0),
        ...end('end_turn', 5),
      ],
      (partial) => partials.push(partial),
    );
    expect(message).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello, world.' }],
      stopReason: 'stop',
      model: 'claude-haiku-4-5',
      usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 0, cacheWriteTokens: 0 },
      timestamp: 7,
    });
    expect(partials.map((partial) => partial.text)).toEqual([
      '',
      '',
      '',
      'Hello',
      'Hello, world.',
      'Hello, world.',
      'Hello, world.',
      'Hello, world.',
    ]);
  });

  test('two tool calls, their input in pieces, after text', async () => {
    const message = await assemble([
      start({ input_tokens: 30, cache_read_input_tokens: 1000, cache_creation_input_tokens: 200 }),
      blockStart(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'Reading both.' }),
      stop(0),
      blockStart(1, { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: {} }),
      delta(1, { type: 'input_json_delta', partial_json: '' }),
      delta(1, { type: 'input_json_delta', partial_json: '{"path":' }),
      delta(1, { type: 'input_json_delta', partial_json: ' "a.txt"}' }),
      stop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_b', name: 'list_dir', input: {} }),
      stop(2),
      ...end('tool_use', 40),
    ]);
    expect(message.content).toEqual([
      { type: 'text', text: 'Reading both.' },
      { type: 'toolCall', id: 'toolu_a', name: 'read_file', arguments: '{"path": "a.txt"}' },
      { type: 'toolCall', id: 'toolu_b', name: 'list_dir', arguments: '{}' },
    ]);
    expect(message.stopReason).toBe('toolUse');
    expect(message.usage).toEqual({
      inputTokens: 1230,
      outputTokens: 40,
      cachedInputTokens: 1000,
      cacheWriteTokens: 200,
    });
  });

  test('redacted thinking is kept, in order with signed thinking, and counts no thinking length', async () => {
    const partials: PartialAnswer[] = [];
    const message = await assemble(
      [
        start(),
        blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
        delta(0, { type: 'thinking_delta', thinking: 'Hmm.' }),
        delta(0, { type: 'signature_delta', signature: 'sig-a' }),
        stop(0),
        blockStart(1, { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' }),
        stop(1),
        blockStart(2, { type: 'text', text: '' }),
        delta(2, { type: 'text_delta', text: 'Done.' }),
        stop(2),
        ...end('end_turn', 9),
      ],
      (partial) => partials.push(partial),
    );
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig-a' },
      { type: 'thinking', thinking: '', redacted: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
      { type: 'text', text: 'Done.' },
    ]);
    expect(partials.at(-1)).toEqual({ text: 'Done.', toolCalls: 0, thinkingLength: 4 });
    // Sent back as they came.
    expect(toAnthropicMessages([message])[0]!.content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'Hmm.', signature: 'sig-a' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
    ]);
  });

  test.each([
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['refusal', 'refusal'],
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
  ])('stop reason %s is %s', async (reason, expected) => {
    const message = await assemble([
      start(),
      blockStart(0, { type: 'text', text: 'Part' }),
      delta(0, { type: 'text_delta', text: 'ial' }),
      stop(0),
      ...end(reason, 3),
    ]);
    expect(message.stopReason).toBe(expected);
    expect(message.content).toEqual([{ type: 'text', text: 'Partial' }]);
  });

  test("a refusal keeps the text begun, stops for refusal, and says why in stop_details' words", async () => {
    const events = fixture('refusal.sse')
      .split('\n\n')
      .flatMap((event) => {
        const data = event.split('\n').find((line) => line.startsWith('data: '));
        return data ? [JSON.parse(data.slice('data: '.length)) as AnthropicStreamEvent] : [];
      });
    const message = await assemble(events);
    expect(message).toMatchObject({
      content: [{ type: 'text', text: 'Here is how to' }],
      stopReason: 'refusal',
      refusal: 'This request was declined because it could enable cyber harm.',
      usage: { inputTokens: 52, outputTokens: 6 },
    });
    // Without an explanation, the category it named; without details, no words at all.
    const details = (stop_details: unknown): AnthropicStreamEvent[] => [
      {
        type: 'message_delta',
        delta: { stop_reason: 'refusal', stop_sequence: null, stop_details },
        usage: { output_tokens: 1 },
      } as unknown as AnthropicStreamEvent,
      { type: 'message_stop' },
    ];
    expect(
      await assemble([start(), ...details({ type: 'refusal', category: 'bio', explanation: null })]),
    ).toMatchObject({ stopReason: 'refusal', refusal: 'declined (bio)' });
    const bare = await assemble([start(), ...details(null)]);
    expect(bare.stopReason).toBe('refusal');
    expect(bare).not.toHaveProperty('refusal');
  });

  test("a refusal's words are the provider's, bounded, and lose what a terminal would act on", async () => {
    const hostile = `\u001b]0;pwned\u0007Declined.\u001b[2J${'x'.repeat(5_000)}`;
    const message = await assemble([
      start(),
      {
        type: 'message_delta',
        delta: {
          stop_reason: 'refusal',
          stop_sequence: null,
          stop_details: { type: 'refusal', category: null, explanation: hostile },
        },
        usage: { output_tokens: 1 },
      } as unknown as AnthropicStreamEvent,
      { type: 'message_stop' },
    ]);
    expect(message.refusal!.startsWith('Declined.xxx')).toBe(true);
    expect(message.refusal).toHaveLength(2_001);
    expect(message.refusal).not.toContain('\u001b');
    expect(message.refusal).not.toContain('\u0007');
  });

  test('output tokens spent thinking are reasoning tokens; input totals in message_delta win', async () => {
    const message = await assemble([
      start({ input_tokens: 5 }),
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: {
          output_tokens: 50,
          input_tokens: 6,
          cache_read_input_tokens: 100,
          output_tokens_details: { thinking_tokens: 30 },
        },
      } as unknown as AnthropicStreamEvent,
      { type: 'message_stop' },
    ]);
    expect(message.usage).toEqual({
      inputTokens: 106,
      outputTokens: 50,
      cachedInputTokens: 100,
      cacheWriteTokens: 0,
      reasoningTokens: 30,
    });
  });

  test('an error event throws, carrying its message', async () => {
    await expect(
      assemble([
        start(),
        blockStart(0, { type: 'text', text: '' }),
        delta(0, { type: 'text_delta', text: 'Hel' }),
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ]),
    ).rejects.toThrow('overloaded_error: Overloaded');
  });

  test('a stream that ends before message_stop throws: the answer is incomplete', async () => {
    await expect(
      assemble([
        start(),
        blockStart(0, { type: 'text', text: '' }),
        delta(0, { type: 'text_delta', text: 'Hel' }),
      ]),
    ).rejects.toThrow('before message_stop');
  });
});

describe('toAnthropicMessages', () => {
  const user = (
    content: string,
    images?: Array<{ type: 'image'; data: string; mimeType: string }>,
  ): Message => ({
    role: 'user',
    content,
    messageId: content,
    ...(images ? { images } : {}),
    timestamp: 1,
  });
  const assistant = (content: AssistantMessage['content']): AssistantMessage => ({
    role: 'assistant',
    content,
    stopReason: 'toolUse',
    model: 'm',
    timestamp: 1,
  });
  const png = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };

  test('tool results merge into one user message, the user message after them too; images go as base64', () => {
    const messages = toAnthropicMessages([
      user('look', [png]),
      assistant([
        { type: 'toolCall', id: 'toolu_1', name: 'screenshot', arguments: '{}' },
        { type: 'toolCall', id: 'toolu_2', name: 'exec', arguments: '{"command":"false"}' },
      ]),
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'screenshot',
        content: [{ type: 'text', text: 'Here:' }, png],
        isError: false,
        timestamp: 1,
      },
      {
        role: 'toolResult',
        toolCallId: 'toolu_2',
        toolName: 'exec',
        content: [{ type: 'text', text: 'exit code 1' }],
        isError: true,
        timestamp: 1,
      },
      user('and now?'),
    ]);
    const image = {
      type: 'image',
      source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
    };
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'look' }, image] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} },
          { type: 'tool_use', id: 'toolu_2', name: 'exec', input: { command: 'false' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Here:' }, image] },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [{ type: 'text', text: 'exit code 1' }],
            is_error: true,
          },
          { type: 'text', text: 'and now?', cache_control: { type: 'ephemeral' } },
        ],
      },
    ]);
  });

  test('unparseable arguments become {}; thinking without a signature is dropped; text stays between them in order', () => {
    const [, turn] = toAnthropicMessages([
      user('go'),
      assistant([
        { type: 'thinking', thinking: 'from another provider' },
        { type: 'thinking', thinking: 'a reasoning item', reasoningItem: { id: 'rs_1' } },
        { type: 'thinking', thinking: 'signed', signature: 'sig' },
        { type: 'text', text: 'Calling.' },
        { type: 'toolCall', id: 'toolu_1', name: 'exec', arguments: '{"command": "ls"' },
        { type: 'toolCall', id: 'toolu_2', name: 'exec', arguments: '[1, 2]' },
      ]),
    ]);
    expect(turn).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'signed', signature: 'sig' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'toolu_1', name: 'exec', input: {} },
        { type: 'tool_use', id: 'toolu_2', name: 'exec', input: {}, cache_control: { type: 'ephemeral' } },
      ],
    });
  });

  test('the cache mark goes on the last block that may carry one, never on thinking', () => {
    // A turn that ends in thinking (cut at its limit while thinking): the API refuses a marked thinking block.
    const [, turn] = toAnthropicMessages([
      user('go'),
      assistant([
        { type: 'text', text: 'Before.' },
        { type: 'thinking', thinking: 'signed', signature: 'sig' },
        { type: 'thinking', thinking: '', redacted: 'opaque' },
      ]),
    ]);
    expect(turn!.content).toEqual([
      { type: 'text', text: 'Before.', cache_control: { type: 'ephemeral' } },
      { type: 'thinking', thinking: 'signed', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
    ]);
  });

  test('tool call ids the API would refuse are rewritten, the same for the call and its result', () => {
    const messages = toAnthropicMessages([
      user('go'),
      assistant([{ type: 'toolCall', id: 'call:0/x', name: 'exec', arguments: '{}' }]),
      {
        role: 'toolResult',
        toolCallId: 'call:0/x',
        toolName: 'exec',
        content: [{ type: 'text', text: 'ok' }],
        isError: false,
        timestamp: 1,
      },
    ]);
    const id = (messages[1]!.content[0] as { id: string }).id;
    expect(id).toMatch(/^toolu_[0-9a-f]{24}$/);
    expect(messages[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: id });
  });

  test('a user message sent between a call and its result still has the results first', () => {
    const messages = toAnthropicMessages([
      user('go'),
      assistant([{ type: 'toolCall', id: 'toolu_1', name: 'exec', arguments: '{}' }]),
      user('hurry'),
      {
        role: 'toolResult',
        toolCallId: 'toolu_1',
        toolName: 'exec',
        content: [{ type: 'text', text: 'ok' }],
        isError: false,
        timestamp: 1,
      },
    ]);
    expect(messages[2]!.content.map((block) => block.type)).toEqual(['tool_result', 'text']);
  });
});

describe('Anthropic SDK errors are classified like OpenAI’s', () => {
  const apiError = (status: number, headers: Record<string, string> = {}) =>
    Anthropic.APIError.generate(
      status,
      { type: 'error', error: { type: 'some_error', message: 'bad thing' } },
      'bad thing',
      new Headers(headers),
    );

  test.each([400, 401, 403, 404, 422])('status %i is a non-retryable ModelRequestRejected', (status) => {
    const failure = classifyModelError(apiError(status), anthropicFailureOf);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      nonRetryable: true,
      type: 'ModelRequestRejected',
      details: [{ status }],
    });
    expect((failure as ApplicationFailure).message).toContain('bad thing');
    expect(modelErrorKind(apiError(status), anthropicFailureOf)).toBe('rejected');
  });

  test.each([429, 500, 529])('status %i is a retryable ModelUnavailable', (status) => {
    const failure = classifyModelError(apiError(status), anthropicFailureOf);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ nonRetryable: false, type: 'ModelUnavailable', details: [{ status }] });
  });

  test('a 429 honours Retry-After and counts as rate limited; a 529 is unavailable', () => {
    expect(classifyModelError(apiError(429, { 'retry-after': '12' }), anthropicFailureOf)).toMatchObject({
      nextRetryDelay: 12_000,
    });
    expect(modelErrorKind(apiError(429), anthropicFailureOf)).toBe('rate_limited');
    expect(apiError(529)).toBeInstanceOf(Anthropic.APIError);
    expect(modelErrorKind(apiError(529), anthropicFailureOf)).toBe('unavailable');
  });

  test('a connection error is retryable; an abort is left alone', () => {
    const failure = classifyModelError(
      new Anthropic.APIConnectionError({ message: 'ECONNREFUSED' }),
      anthropicFailureOf,
    );
    expect(failure).toMatchObject({ nonRetryable: false, type: 'ModelUnavailable' });
    expect((failure as ApplicationFailure).message).toContain('ECONNREFUSED');
    expect(modelErrorKind(new Anthropic.APIConnectionTimeoutError(), anthropicFailureOf)).toBe('unavailable');
    const abort = new Anthropic.APIUserAbortError();
    expect(classifyModelError(abort, anthropicFailureOf)).toBe(abort);
    expect(modelErrorKind(abort, anthropicFailureOf)).toBe('other');
  });

  test('a streamed error event: overloaded and rate limits are retryable, others left as they are', () => {
    const streamed = (type: string) =>
      new Anthropic.APIError(
        undefined,
        { type: 'error', error: { type, message: type } },
        undefined,
        new Headers(),
      );
    expect(classifyModelError(streamed('overloaded_error'), anthropicFailureOf)).toMatchObject({
      type: 'ModelUnavailable',
      nonRetryable: false,
    });
    expect(modelErrorKind(streamed('rate_limit_error'), anthropicFailureOf)).toBe('rate_limited');
    const other = streamed('invalid_request_error');
    expect(classifyModelError(other, anthropicFailureOf)).toBe(other);
  });
});
