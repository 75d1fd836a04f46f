import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import OpenAI from 'openai';
import type { PartialAnswer } from '../../src/activities/models/model-wire';
import { responsesWire } from '../../src/activities/models/openai/responses-wire';
import { toResponsesInput } from '../../src/activities/models/openai/responses-input';
import { assembleResponsesStream } from '../../src/activities/models/openai/responses-stream';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/shared/messages';

// OpenAI's Responses API through a real `openai` client against a local server that streams the
// documented events (test/fixtures/responses-api), and the stream assembler on its own.

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
type Body = Record<string, unknown>;

const fixture = (name: string) =>
  readFileSync(path.join(__dirname, '../fixtures/responses-api', `${name}.sse`), 'utf8');

/** The events of a server-sent stream, as the client library yields them (the `data:` of each). */
function eventsIn(sse: string): StreamEvent[] {
  return sse
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (!data) throw new Error(`an event without data: ${block}`);
      return JSON.parse(data.slice('data: '.length)) as StreamEvent;
    });
}

async function* streamOf(events: StreamEvent[]): AsyncIterable<StreamEvent> {
  yield* events;
}

/** Answers each POST /v1/responses with the next of `replies`, as server-sent events, and keeps the bodies. */
async function startResponsesServer(replies: string[]) {
  const requests: Body[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push(JSON.parse(Buffer.concat(chunks).toString()) as Body);
      const next = request.url === '/v1/responses' ? replies[requests.length - 1] : undefined;
      if (next === undefined) return void response.writeHead(500).end(`no reply scripted for ${request.url}`);
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(next);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const openai = new OpenAI({
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    apiKey: 'x',
    maxRetries: 0,
  });
  return { openai, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}

const READ_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'read',
    description: 'Read a file of the workspace.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};

const toolResult = (toolCallId: string, text: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'read',
  content: [{ type: 'text', text }],
  isError: false,
  timestamp: 2,
});

const RS_1 = { id: 'rs_0a1b2c3d4e5f60010068f1a2b4', encrypted: 'gAAAAABo8aK0-first-reasoning-encrypted==' };
const RS_2 = { id: 'rs_0a1b2c3d4e5f60020068f1a2c1', encrypted: 'gAAAAABo8aK3-second-reasoning-encrypted==' };
const RS_3 = { id: 'rs_0a1b2c3d4e5f60030068f1a2d1', encrypted: 'gAAAAABo8aK6-third-reasoning-encrypted==' };
const SUMMARY_1 = '**Reading the notes**\n\nThe user wants the notes first, so I read notes.txt.';
const SUMMARY_2 = '**Then the todo list**\n\nNotes read; todo.txt next.';
const CALL_NOTES = 'call_Qm3nX8vR2pL5tW9yZ1aB4cD6';
const CALL_TODO = 'call_Hk7pT2wQ9sV4nB6mJ3xF8gR1';

test('a tool loop of three calls: each later request carries the earlier reasoning items, encrypted, before their calls', async () => {
  const server = await startResponsesServer([
    fixture('tool-loop-1'),
    fixture('tool-loop-2'),
    fixture('tool-loop-3'),
  ]);
  try {
    const transcript: Message[] = [
      { role: 'user', content: 'Read my notes, then my todo list.', messageId: 'm1', timestamp: 1 },
    ];
    const partials: PartialAnswer[] = [];
    const ask = () =>
      responsesWire(server.openai).open({
        model: 'gpt-5-mini',
        provider: 'openai',
        systemPrompt: 'You read files for the user.',
        messages: transcript,
        tools: [READ_TOOL],
      })(
        new AbortController().signal,
        (partial) => partials.push(partial),
        () => 42,
      );

    const first = await ask();
    expect(first).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: SUMMARY_1,
          reasoningItem: { id: RS_1.id, encryptedContent: RS_1.encrypted },
        },
        { type: 'toolCall', id: CALL_NOTES, name: 'read', arguments: '{"path":"notes.txt"}' },
      ],
      stopReason: 'toolUse',
      model: 'gpt-5-mini-2025-08-07',
      usage: { inputTokens: 412, outputTokens: 86, cachedInputTokens: 0, reasoningTokens: 64 },
      timestamp: 42,
    });
    expect(partials.at(-1)).toEqual({ text: '', toolCalls: 1, thinkingLength: SUMMARY_1.length });
    transcript.push(first, toolResult(CALL_NOTES, 'buy milk'));

    const second = await ask();
    expect(second).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        {
          type: 'thinking',
          thinking: SUMMARY_2,
          reasoningItem: { id: RS_2.id, encryptedContent: RS_2.encrypted },
        },
        { type: 'toolCall', id: CALL_TODO, name: 'read', arguments: '{"path":"todo.txt"}' },
      ],
      stopReason: 'toolUse',
      model: 'gpt-5-mini-2025-08-07',
      usage: { inputTokens: 538, outputTokens: 71, cachedInputTokens: 384, reasoningTokens: 48 },
      timestamp: 42,
    });
    transcript.push(second, toolResult(CALL_TODO, 'call Ana'));

    const third = await ask();
    expect(third).toEqual<AssistantMessage>({
      role: 'assistant',
      content: [
        // No summary came with it: the thinking is empty, the item still goes back next time.
        { type: 'thinking', thinking: '', reasoningItem: { id: RS_3.id, encryptedContent: RS_3.encrypted } },
        {
          type: 'text',
          text: 'Your notes say to buy milk; the todo list says to call Ana.',
          responseItem: { id: 'msg_0a1b2c3d4e5f60030068f1a2d2' },
        },
      ],
      stopReason: 'stop',
      model: 'gpt-5-mini-2025-08-07',
      // reasoning_tokens 0 is left out, as when the provider does not say.
      usage: { inputTokens: 665, outputTokens: 40, cachedInputTokens: 512 },
      timestamp: 42,
    });

    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request).toMatchObject({
        model: 'gpt-5-mini',
        instructions: 'You read files for the user.',
        store: false,
        include: ['reasoning.encrypted_content'],
        stream: true,
      });
      expect(request.tools).toEqual([
        {
          type: 'function',
          name: 'read',
          description: 'Read a file of the workspace.',
          parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          strict: false,
        },
      ]);
    }
    const reasoning = (item: { id: string; encrypted: string }, summary: string) => ({
      type: 'reasoning',
      id: item.id,
      summary: [{ type: 'summary_text', text: summary }],
      encrypted_content: item.encrypted,
    });
    const firstTurn = [
      { role: 'user', content: 'Read my notes, then my todo list.' },
      reasoning(RS_1, SUMMARY_1),
      { type: 'function_call', call_id: CALL_NOTES, name: 'read', arguments: '{"path":"notes.txt"}' },
      { type: 'function_call_output', call_id: CALL_NOTES, output: 'buy milk' },
    ];
    const [request1, request2, request3] = server.requests;
    expect(request1?.input).toEqual(firstTurn.slice(0, 1));
    expect(request2?.input).toEqual(firstTurn);
    expect(request3?.input).toEqual([
      ...firstTurn,
      reasoning(RS_2, SUMMARY_2),
      { type: 'function_call', call_id: CALL_TODO, name: 'read', arguments: '{"path":"todo.txt"}' },
      { type: 'function_call_output', call_id: CALL_TODO, output: 'call Ana' },
    ]);
  } finally {
    await server.close();
  }
});

test('the transcript as input items: images as data URLs, text and calls after their reasoning, thinking of other providers left out', () => {
  const image = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };
  const input = toResponsesInput([
    { role: 'user', content: 'What is in this?', images: [image], messageId: 'm1', timestamp: 1 },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'A chart.', reasoningItem: { id: 'rs_a', encryptedContent: 'enc_a' } },
        { type: 'thinking', thinking: 'Signed elsewhere.', signature: 'sig' },
        { type: 'text', text: 'Let me look closer.', responseItem: { id: 'msg_a', phase: 'commentary' } },
        { type: 'toolCall', id: 'call_1', name: 'screenshot', arguments: '{}' },
      ],
      stopReason: 'toolUse',
      model: 'gpt-5',
      timestamp: 2,
    },
    {
      role: 'toolResult',
      toolCallId: 'call_1',
      toolName: 'screenshot',
      content: [{ type: 'text', text: 'the screen:' }, image],
      isError: false,
      timestamp: 3,
    },
  ]);
  expect(input).toEqual([
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'What is in this?' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
      ],
    },
    {
      type: 'reasoning',
      id: 'rs_a',
      summary: [{ type: 'summary_text', text: 'A chart.' }],
      encrypted_content: 'enc_a',
    },
    // Back as the output message it was: the reasoning before it needs its own following item.
    {
      type: 'message',
      id: 'msg_a',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Let me look closer.', annotations: [] }],
      phase: 'commentary',
    },
    { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
    {
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'the screen:' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
      ],
    },
  ]);
});

test('text another API wrote goes back as a plain assistant message', () => {
  expect(
    toResponsesInput([
      {
        role: 'assistant',
        content: [{ type: 'text', text: 'From the chat API.' }],
        stopReason: 'stop',
        model: 'gpt-4o',
        timestamp: 1,
      },
    ]),
  ).toEqual([{ role: 'assistant', content: 'From the chat API.' }]);
});

test('a text answer: the text whole, reported as it grows, no tool calls', async () => {
  const partials: PartialAnswer[] = [];
  const answer = await assembleResponsesStream(
    streamOf(eventsIn(fixture('text-only'))),
    (partial) => partials.push(partial),
    () => 7,
  );
  expect(answer).toEqual<AssistantMessage>({
    role: 'assistant',
    content: [
      { type: 'text', text: 'Hello, world.', responseItem: { id: 'msg_0a1b2c3d4e5f60050068f1a2f1' } },
    ],
    stopReason: 'stop',
    model: 'gpt-5-mini-2025-08-07',
    usage: { inputTokens: 20, outputTokens: 5, cachedInputTokens: 0 },
    timestamp: 7,
  });
  expect([...new Set(partials.map((partial) => partial.text))]).toEqual([
    '',
    'Hel',
    'Hello, ',
    'Hello, world.',
  ]);
  expect(partials.every((partial) => partial.toolCalls === 0 && partial.thinkingLength === 0)).toBe(true);
});

test('several function calls, arguments in pieces: each whole, in output order, ids from call_id', async () => {
  const partials: PartialAnswer[] = [];
  const answer = await assembleResponsesStream(
    streamOf(eventsIn(fixture('parallel-calls'))),
    (partial) => partials.push(partial),
    () => 7,
  );
  expect(answer.content).toEqual([
    {
      type: 'thinking',
      thinking: 'Both files at once.\n\nThen compare them.',
      reasoningItem: {
        id: 'rs_0a1b2c3d4e5f60040068f1a2e1',
        encryptedContent: 'gAAAAABo8aK9-parallel-reasoning-encrypted==',
      },
    },
    { type: 'toolCall', id: 'call_A1', name: 'read', arguments: '{"path":"a.txt"}' },
    { type: 'toolCall', id: 'call_B2', name: 'grep', arguments: '{"pattern":"TODO","path":"src"}' },
  ]);
  expect(answer).toMatchObject({ stopReason: 'toolUse', usage: { reasoningTokens: 50 } });
  expect(partials.map((partial) => partial.toolCalls)).toContain(1);
  expect(partials.at(-1)).toEqual({
    text: '',
    toolCalls: 2,
    thinkingLength: 'Both files at once.Then compare them.'.length,
  });
});

test('function calls whose argument deltas interleave are put together by item id, even without their done events', async () => {
  const call = (id: string, callId: string, name: string, index: number): StreamEvent => ({
    type: 'response.output_item.added',
    sequence_number: index,
    output_index: index,
    item: { type: 'function_call', id, call_id: callId, name, arguments: '' },
  });
  const delta = (id: string, index: number, piece: string): StreamEvent => ({
    type: 'response.function_call_arguments.delta',
    sequence_number: 10,
    item_id: id,
    output_index: index,
    delta: piece,
  });
  const answer = await assembleResponsesStream(
    streamOf([
      call('fc_1', 'call_1', 'read', 0),
      call('fc_2', 'call_2', 'exec', 1),
      delta('fc_2', 1, '{"command":'),
      delta('fc_1', 0, '{"path":'),
      delta('fc_2', 1, '"ls"}'),
      delta('fc_1', 0, '"x"}'),
      completed({ status: 'completed' }),
    ]),
    () => {},
    () => 7,
  );
  expect(answer.content).toEqual([
    { type: 'toolCall', id: 'call_1', name: 'read', arguments: '{"path":"x"}' },
    { type: 'toolCall', id: 'call_2', name: 'exec', arguments: '{"command":"ls"}' },
  ]);
});

test('reasoning, a preamble, more reasoning and a call keep the order the model wrote them in, there and back', async () => {
  // Sent back out of order, a reasoning item is not followed by its own next item and the API refuses it.
  const reasoningDone = (id: string, index: number, summary: string): StreamEvent => ({
    type: 'response.output_item.done',
    sequence_number: index,
    output_index: index,
    item: {
      type: 'reasoning',
      id,
      summary: [{ type: 'summary_text', text: summary }],
      encrypted_content: `enc-${id}`,
    },
  });
  const answer = await assembleResponsesStream(
    streamOf([
      reasoningDone('rs_a', 0, 'first'),
      {
        type: 'response.output_text.delta',
        sequence_number: 1,
        item_id: 'msg_a',
        output_index: 1,
        content_index: 0,
        delta: 'Looking at the ',
        logprobs: [],
      },
      {
        type: 'response.output_text.delta',
        sequence_number: 2,
        item_id: 'msg_a',
        output_index: 1,
        content_index: 0,
        delta: 'notes.',
        logprobs: [],
      },
      {
        type: 'response.output_item.done',
        sequence_number: 3,
        output_index: 1,
        item: {
          type: 'message',
          id: 'msg_a',
          role: 'assistant',
          status: 'completed',
          phase: 'commentary',
          content: [{ type: 'output_text', text: 'Looking at the notes.', annotations: [] }],
        },
      },
      reasoningDone('rs_b', 2, 'second'),
      {
        type: 'response.output_item.done',
        sequence_number: 3,
        output_index: 3,
        item: {
          type: 'function_call',
          id: 'fc_a',
          call_id: 'call_a',
          name: 'read',
          arguments: '{"path":"n"}',
        },
      },
      completed({ status: 'completed' }),
    ]),
    () => {},
    () => 7,
  );
  expect(answer.content.map((part) => part.type)).toEqual(['thinking', 'text', 'thinking', 'toolCall']);
  expect(answer.content[1]).toEqual({
    type: 'text',
    text: 'Looking at the notes.',
    responseItem: { id: 'msg_a', phase: 'commentary' },
  });
  expect(answer.stopReason).toBe('toolUse');

  const input = toResponsesInput([answer]);
  expect(input.map((item) => ('type' in item && item.type) || ('role' in item && item.role))).toEqual([
    'reasoning',
    'message',
    'reasoning',
    'function_call',
  ]);
  expect(input[1]).toMatchObject({ id: 'msg_a', phase: 'commentary' });
  expect(input[0]).toMatchObject({ id: 'rs_a', encrypted_content: 'enc-rs_a' });
  expect(input[2]).toMatchObject({ id: 'rs_b', encrypted_content: 'enc-rs_b' });
});

test('a call before reasoning and another call: the parts keep the output order, calls not gathered at the end', async () => {
  const callDone = (id: string, index: number): StreamEvent => ({
    type: 'response.output_item.done',
    sequence_number: index,
    output_index: index,
    item: { type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: 'read', arguments: '{}' },
  });
  const answer = await assembleResponsesStream(
    streamOf([
      callDone('a', 0),
      {
        type: 'response.output_item.done',
        sequence_number: 1,
        output_index: 1,
        item: { type: 'reasoning', id: 'rs_between', summary: [], encrypted_content: 'enc' },
      },
      callDone('b', 2),
      completed({ status: 'completed' }),
    ]),
    () => {},
    () => 7,
  );
  expect(answer.content.map((part) => (part.type === 'toolCall' ? part.id : part.type))).toEqual([
    'call_a',
    'thinking',
    'call_b',
  ]);
});

test("a refusal part ends the answer as refused, in the model's words; sent back without its reasoning", async () => {
  const partials: PartialAnswer[] = [];
  const refused = await assembleResponsesStream(
    streamOf(eventsIn(fixture('refusal'))),
    (partial) => partials.push(partial),
    () => 7,
  );
  expect(refused).toMatchObject({
    stopReason: 'refusal',
    refusal: "I'm sorry, but I can't assist with that request.",
    usage: { inputTokens: 31, outputTokens: 74, reasoningTokens: 64 },
  });
  // The refusal is not the answer's text.
  expect(refused.content.map((part) => part.type)).toEqual(['thinking']);
  expect(partials.every((partial) => partial.text === '')).toBe(true);

  // The refusal's words from its deltas alone, when no done event came.
  const deltasOnly = eventsIn(fixture('refusal')).filter(
    (event) => event.type !== 'response.refusal.done' && event.type !== 'response.output_item.done',
  );
  expect(
    await assembleResponsesStream(
      streamOf(deltasOnly),
      () => {},
      () => 7,
    ),
  ).toMatchObject({ stopReason: 'refusal', refusal: "I'm sorry, but I can't assist with that request." });

  // Its reasoning item cannot go back without the item that followed it: the refusal goes as words.
  const input = toResponsesInput([
    { role: 'user', content: 'Tell me how.', messageId: 'm1', timestamp: 1 },
    refused,
    { role: 'user', content: 'Something else, then.', messageId: 'm2', timestamp: 2 },
  ]);
  expect(input).toEqual([
    { role: 'user', content: 'Tell me how.' },
    { role: 'assistant', content: "I'm sorry, but I can't assist with that request." },
    { role: 'user', content: 'Something else, then.' },
  ]);
});

test('an answer cut at max_output_tokens keeps its text and stops for length; a filtered one for contentFilter', async () => {
  const cut = await assembleResponsesStream(
    streamOf(eventsIn(fixture('incomplete-max-output-tokens'))),
    () => {},
    () => 7,
  );
  expect(cut).toMatchObject({
    content: [{ type: 'text', text: 'The list goes on and' }],
    stopReason: 'length',
    usage: { inputTokens: 50, outputTokens: 16 },
  });
  // Sent back, the cut message says it was cut, as the API wrote it.
  expect(toResponsesInput([cut])).toEqual([
    {
      type: 'message',
      id: 'msg_0a1b2c3d4e5f60060068f1a301',
      role: 'assistant',
      status: 'incomplete',
      content: [{ type: 'output_text', text: 'The list goes on and', annotations: [] }],
    },
  ]);

  const filtered = await assembleResponsesStream(
    streamOf([
      completed(
        { status: 'incomplete', incomplete_details: { reason: 'content_filter' } },
        'response.incomplete',
      ),
    ]),
    () => {},
    () => 7,
  );
  expect(filtered).toMatchObject({ content: [], stopReason: 'contentFilter' });
});

test('a failed response, or an error event, throws with the message the endpoint gave', async () => {
  await expect(
    assembleResponsesStream(
      streamOf([
        completed(
          { status: 'failed', error: { code: 'server_error', message: 'The server had an error.' } },
          'response.failed',
        ),
      ]),
      () => {},
      () => 7,
    ),
  ).rejects.toThrow('The server had an error.');

  // Through the client library too: it hands both events on rather than raising its own error.
  const failed = `event: response.failed\ndata: ${JSON.stringify(
    completed(
      { status: 'failed', error: { code: 'server_error', message: 'The server had an error.' } },
      'response.failed',
    ),
  )}\n\n`;
  const errorEvent = `event: error\ndata: ${JSON.stringify({
    type: 'error',
    sequence_number: 0,
    code: 'rate_limit_exceeded',
    message: 'Slow down.',
    param: null,
  })}\n\n`;
  const server = await startResponsesServer([failed, errorEvent]);
  try {
    const call = () =>
      responsesWire(server.openai).open({ model: 'gpt-5-mini', provider: 'openai', messages: [], tools: [] })(
        new AbortController().signal,
        () => {},
        () => 7,
      );
    await expect(call()).rejects.toThrow('The server had an error.');
    await expect(call()).rejects.toThrow('Slow down.');
    // No system prompt and no tools: neither is sent.
    expect(server.requests[0]).not.toHaveProperty('instructions');
    expect(server.requests[0]).not.toHaveProperty('tools');
  } finally {
    await server.close();
  }
});

/** A closing event of a response (`response.completed` unless named) with `fields` over a bare response. */
function completed(
  fields: Partial<OpenAI.Responses.Response>,
  type: 'response.completed' | 'response.incomplete' | 'response.failed' = 'response.completed',
): StreamEvent {
  const response = {
    id: 'resp_1',
    object: 'response',
    created_at: 0,
    model: 'gpt-5-mini',
    output: [],
    error: null,
    incomplete_details: null,
    usage: undefined,
    ...fields,
  } as OpenAI.Responses.Response;
  return { type, sequence_number: 99, response };
}
