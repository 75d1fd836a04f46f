import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { textOf, thinkingOf, toolCallsOf } from '../../src/shared/messages';
import { defineTool, textResult } from '../../src/tools/tool';
import { ask } from '../support/ask';
import { type ProviderStream, providerStreams } from '../support/provider-streams';
import type { ChatRequest } from '../support/scripted-model';
import { type TestHarness, startHarness } from '../support/test-worker';

/**
 * Every recorded provider stream (test/fixtures/provider-streams) through a real conversation: a
 * local endpoint answers the first request with the recording as it is, byte for byte, and the
 * second (after the tool ran) with a plain text answer.
 */

const FINAL_ANSWER = 'The tool answered.';

/** The tools the recordings call, each remembering what it was called with. */
const ran: Array<{ id: string; name: string; params: unknown }> = [];
const recordingTool = <T extends z.ZodObject<z.ZodRawShape>>(name: string, parameters: T) =>
  defineTool({
    name,
    label: name,
    description: `The ${name} tool of the recorded provider streams.`,
    parameters,
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute(id, params) {
      ran.push({ id, name, params });
      return textResult(`${name} ran`);
    },
  });
const tools = [
  recordingTool('get_weather', z.object({ location: z.string(), unit: z.string().optional() })),
  recordingTool('retrieve_payment_status', z.object({ transaction_id: z.string() })),
  recordingTool('get_current_time', z.object({})),
];

/** The endpoint: each request takes the next queued SSE body; every request is kept. */
const queued: string[] = [];
const requests: ChatRequest[] = [];
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    requests.push(JSON.parse(body) as ChatRequest);
    const sse = queued.shift();
    if (sse === undefined) {
      response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'no recorded answer left' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.end(sse);
  });
});

function textAnswer(text: string): string {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-final',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'scripted-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  return chunk({ role: 'assistant', content: text }, null) + chunk({}, 'stop') + 'data: [DONE]\n\n';
}

let harness: TestHarness;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  harness = await startHarness({ modelBaseUrl: `http://127.0.0.1:${port}/v1`, tools });
});
afterAll(async () => {
  await harness?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  queued.length = 0;
  requests.length = 0;
  ran.length = 0;
});

const cases = providerStreams().map((stream) => [`${stream.file} ${stream.kind}`, stream] as const);

test.each(cases)('%s, replayed through a conversation', async (_name, stream: ProviderStream) => {
  const id = `conv-${randomUUID()}`;
  if (stream.kind === 'text') {
    queued.push(stream.sse);
    const { finished } = await ask(harness.agent, id, 'Hello');
    expect(finished).toMatchObject({ outcome: 'answered', answer: stream.expected.answer });
    const reply = (await harness.agent.state(id)).transcript.at(-1)!;
    if (reply.role !== 'assistant') throw new Error(`the last message is a ${reply.role}`);
    expect(textOf(reply)).toBe(stream.expected.answer);
    expect(thinkingOf(reply)).toBe(stream.expected.thinking ?? '');
    expect(requests).toHaveLength(1);
    return;
  }

  const { id: callId, name, arguments: args } = stream.expected;
  queued.push(stream.sse, textAnswer(FINAL_ANSWER));
  const { finished } = await ask(harness.agent, id, 'Use the tool');
  expect(finished).toMatchObject({ outcome: 'answered', answer: FINAL_ANSWER });

  // The tool ran once, for that call, with those arguments.
  expect(ran).toEqual([{ id: callId, name, params: JSON.parse(args) }]);
  const transcript = (await harness.agent.state(id)).transcript;
  const call = transcript.find((message) => message.role === 'assistant')!;
  if (call.role !== 'assistant') throw new Error('no assistant message');
  const { thoughtSignature } = stream.expected;
  expect(toolCallsOf(call)).toEqual([
    {
      type: 'toolCall',
      id: callId,
      name,
      arguments: args,
      ...(thoughtSignature ? { thoughtSignature } : {}),
    },
  ]);
  expect(thinkingOf(call)).toBe(stream.expected.thinking ?? '');
  expect(transcript.find((message) => message.role === 'toolResult')).toMatchObject({
    toolCallId: callId,
    toolName: name,
    isError: false,
  });

  // The next request carries the call and its result under that id, and no thinking as text.
  expect(requests).toHaveLength(2);
  const sent = requests[1]!.messages;
  const sentCall = sent.find((message) => message.role === 'assistant')!;
  expect(sentCall.content ?? null).toBe(stream.expected.text ?? null);
  expect(sentCall.tool_calls).toEqual([
    { id: callId, type: 'function', function: { name, arguments: args } },
  ]);
  expect(sent.filter((message) => message.role === 'tool')).toEqual([
    { role: 'tool', tool_call_id: callId, content: `${name} ran` },
  ]);
});
