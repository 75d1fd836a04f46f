import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import nock from 'nock';
import OpenAI from 'openai';
import { anthropicWire } from '../../src/activities/models/anthropic/anthropic-wire';
import type { ModelWire } from '../../src/activities/models/model-wire';
import { chatCompletionsWire } from '../../src/activities/models/openai/chat-wire';
import { endpointProviderName } from '../../src/activities/models/openai/endpoint-provider';
import { responsesWire } from '../../src/activities/models/openai/responses-wire';
import { streamedModelCall } from '../../src/activities/models/streamed-model-call';

const exporter = new InMemorySpanExporter();
const fixture = (...parts: string[]) =>
  readFileSync(path.join(__dirname, '..', 'fixtures', ...parts), 'utf8');
const chatStream = [
  {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'm',
    choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }],
  },
]
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .concat('data: [DONE]\n\n')
  .join('');

let server: http.Server;
let local: string;
let port: number;

beforeAll(async () => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        request.url === '/v1/messages'
          ? fixture('anthropic-messages', 'tool-loop-3.sse')
          : request.url === '/v1/responses'
            ? fixture('responses-api', 'text-only.sse')
            : chatStream,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  local = `127.0.0.1:${port}`;
});

afterAll(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  trace.disable();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The attributes of the span of one call through `wire`. */
async function spanOf(wire: ModelWire) {
  exporter.reset();
  await new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(() =>
    streamedModelCall(wire, {
      model: 'the-model',
      provider: 'openai',
      messages: [{ role: 'user', content: 'hi', messageId: 'm1', timestamp: 0 }],
      tools: [],
    }),
  );
  // Ours, not the one Anthropic's SDK makes of its own request.
  const spans = exporter.getFinishedSpans().filter((span) => span.name === 'chat the-model');
  expect(spans).toHaveLength(1);
  return spans[0]!.attributes;
}

const openAi = (baseURL: string) => new OpenAI({ baseURL, apiKey: 'test', maxRetries: 0 });

test("a call through Anthropic's Messages API is Anthropic's, at the server it was sent to", async () => {
  const client = new Anthropic({ baseURL: `http://${local}`, apiKey: 'test', maxRetries: 0 });
  expect(await spanOf(anthropicWire(client))).toMatchObject({
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': 'anthropic',
    'gen_ai.request.model': 'the-model',
    'server.address': '127.0.0.1',
    'server.port': port,
  });
});

test("Chat Completions and the Responses API at OpenAI's own endpoint are OpenAI's", async () => {
  nock('https://api.openai.com')
    .post('/v1/chat/completions')
    .reply(200, chatStream, { 'content-type': 'text/event-stream' });
  expect(await spanOf(chatCompletionsWire(openAi('https://api.openai.com/v1')))).toMatchObject({
    'gen_ai.provider.name': 'openai',
    'server.address': 'api.openai.com',
  });
  nock('https://api.openai.com')
    .post('/v1/responses')
    .reply(200, fixture('responses-api', 'text-only.sse'), { 'content-type': 'text/event-stream' });
  expect(await spanOf(responsesWire(openAi('https://api.openai.com/v1')))).toMatchObject({
    'gen_ai.provider.name': 'openai',
  });
});

test('an OpenAI-compatible endpoint is named by its host when the conventions know it, else _OTHER', async () => {
  expect(await spanOf(chatCompletionsWire(openAi(`http://${local}/v1`)))).toMatchObject({
    'gen_ai.provider.name': '_OTHER',
    'server.address': '127.0.0.1',
    'server.port': port,
  });
  expect(await spanOf(responsesWire(openAi(`http://${local}/v1`)))).toMatchObject({
    'gen_ai.provider.name': '_OTHER',
  });
  expect(endpointProviderName('https://generativelanguage.googleapis.com/v1beta/openai/')).toBe('gcp.gemini');
  expect(endpointProviderName('https://my-team.openai.azure.com/openai/deployments/gpt-4o')).toBe(
    'azure.ai.openai',
  );
  expect(endpointProviderName('https://api.mistral.ai/v1')).toBe('mistral_ai');
  expect(endpointProviderName('https://api.deepseek.com')).toBe('deepseek');
  expect(endpointProviderName('https://api.groq.com/openai/v1')).toBe('groq');
  expect(endpointProviderName('https://api.x.ai/v1')).toBe('x_ai');
  expect(endpointProviderName('https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1')).toBe(
    'aws.bedrock',
  );
  // A look-alike host is not the provider it imitates.
  expect(endpointProviderName('https://api.openai.com.example.net/v1')).toBe('_OTHER');
  expect(endpointProviderName('http://127.0.0.1:11434/v1')).toBe('_OTHER');
});
