import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicWire } from '../../src/activities/models/anthropic/anthropic-wire';
import { conversationRegion } from '../../src/console/conversation-view';
import { escapeHtml } from '../../src/console/html';
import { assertCliBuilt, runCli } from '../support/cli-process';
import { providerRefusal } from '../support/provider-streams';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { ask } from '../support/ask';
import { waitForEvent } from '../support/wait-for-event';

// A tool loop of three model calls through OpenAI's Responses API and through Anthropic's Messages
// API, each against a local server that streams as the API documents: the second and third
// requests carry the reasoning items (or signed thinking blocks) of the calls before them. And a
// refusal through each of the three APIs, Chat Completions included.

type Body = Record<string, unknown>;
interface ApiServer {
  url: string;
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: Body }>;
  close(): Promise<void>;
}

/** Where the worker posts its webhooks: the same server, which keeps them with the requests. */
const HOOKS = '/hooks';

/** What a user says to be refused: each API's server then answers with its recorded refusal. */
const REFUSE = 'Tell me something your provider will not let you say.';

/**
 * Answers each POST with the next of `replies` for its path, as server-sent events; a request of a
 * conversation that said REFUSE with the refusal of its path instead.
 */
async function startApiServer(
  replies: Record<string, string[]>,
  refusals: Record<string, string>,
): Promise<ApiServer> {
  const requests: ApiServer['requests'] = [];
  const served: Record<string, number> = {};
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const route = request.url ?? '';
      requests.push({
        path: route,
        headers: request.headers,
        body: JSON.parse(Buffer.concat(chunks).toString()) as Body,
      });
      if (route === HOOKS) return void response.writeHead(204).end();
      const body = requests.at(-1)!.body;
      const refused = JSON.stringify(body).includes(REFUSE) ? refusals[route] : undefined;
      if (refused !== undefined) {
        return void response.writeHead(200, { 'content-type': 'text/event-stream' }).end(refused);
      }
      const next = replies[route]?.[served[route] ?? 0];
      served[route] = (served[route] ?? 0) + 1;
      if (next === undefined) return void response.writeHead(500).end(`no reply scripted for ${route}`);
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(next);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const sse = (events: Array<Record<string, unknown> & { type: string }>) =>
  events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');

/** One Responses API stream: a reasoning item and a function call, or text. */
function responsesReply(turn: number, call?: { id: string; path: string }): string {
  const id = `resp_${turn}`;
  const reasoning = {
    type: 'reasoning',
    id: `rs_${turn}`,
    summary: [{ type: 'summary_text', text: `Thought ${turn}.` }],
    encrypted_content: `enc_${turn}`,
  };
  const output = call
    ? [
        reasoning,
        {
          type: 'function_call',
          id: `fc_${turn}`,
          call_id: call.id,
          name: 'read',
          arguments: JSON.stringify({ path: call.path }),
          status: 'completed',
        },
      ]
    : [
        reasoning,
        {
          type: 'message',
          id: `msg_${turn}`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Both files read.', annotations: [] }],
        },
      ];
  const response = (status: string, out: unknown[]) => ({
    id,
    object: 'response',
    created_at: 0,
    model: 'gpt-5-mini',
    status,
    output: out,
    usage:
      status === 'completed'
        ? {
            input_tokens: 1000 * turn,
            input_tokens_details: { cached_tokens: 900 * (turn - 1) },
            output_tokens: 50,
            output_tokens_details: { reasoning_tokens: 30 },
            total_tokens: 1000 * turn + 50,
          }
        : null,
  });
  let seq = 0;
  const events: Array<Record<string, unknown> & { type: string }> = [
    { type: 'response.created', sequence_number: seq++, response: response('in_progress', []) },
    {
      type: 'response.output_item.added',
      sequence_number: seq++,
      output_index: 0,
      item: { ...reasoning, summary: [] },
    },
    {
      type: 'response.reasoning_summary_text.delta',
      sequence_number: seq++,
      item_id: reasoning.id,
      output_index: 0,
      summary_index: 0,
      delta: `Thought ${turn}.`,
    },
    { type: 'response.output_item.done', sequence_number: seq++, output_index: 0, item: reasoning },
  ];
  if (call) {
    const item = output[1]!;
    events.push(
      {
        type: 'response.output_item.added',
        sequence_number: seq++,
        output_index: 1,
        item: { ...item, arguments: '' },
      },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: seq++,
        item_id: `fc_${turn}`,
        output_index: 1,
        delta: JSON.stringify({ path: call.path }).slice(0, 5),
      },
      {
        type: 'response.function_call_arguments.delta',
        sequence_number: seq++,
        item_id: `fc_${turn}`,
        output_index: 1,
        delta: JSON.stringify({ path: call.path }).slice(5),
      },
      { type: 'response.output_item.done', sequence_number: seq++, output_index: 1, item },
    );
  } else {
    events.push(
      {
        type: 'response.output_text.delta',
        sequence_number: seq++,
        item_id: `msg_${turn}`,
        output_index: 1,
        content_index: 0,
        delta: 'Both files ',
        logprobs: [],
      },
      {
        type: 'response.output_text.delta',
        sequence_number: seq++,
        item_id: `msg_${turn}`,
        output_index: 1,
        content_index: 0,
        delta: 'read.',
        logprobs: [],
      },
    );
  }
  events.push({
    type: 'response.completed',
    sequence_number: seq++,
    response: response('completed', output),
  });
  return sse(events);
}

/** One Messages API stream: a signed thinking block and a tool use, or text. */
function anthropicReply(turn: number, call?: { id: string; path: string }): string {
  const events: Array<Record<string, unknown> & { type: string }> = [
    {
      type: 'message_start',
      message: {
        id: `msg_${turn}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 100,
          cache_read_input_tokens: 2000 * (turn - 1),
          cache_creation_input_tokens: 300,
          output_tokens: 1,
        },
      },
    },
    {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    },
    {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'thinking_delta', thinking: `Thought ${turn}.` },
    },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: `sig_${turn}` } },
    { type: 'content_block_stop', index: 0 },
  ];
  if (call) {
    const input = JSON.stringify({ path: call.path });
    events.push(
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: call.id, name: 'read', input: {} },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: input.slice(0, 4) },
      },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: input.slice(4) },
      },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 60 },
      },
    );
  } else {
    events.push(
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Both files read.' } },
      { type: 'content_block_stop', index: 1 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 20 },
      },
    );
  }
  events.push({ type: 'message_stop' });
  return sse(events);
}

const FIXTURES = path.join(__dirname, '..', 'fixtures');

let server: ApiServer;
let harness: TestHarness;

beforeAll(async () => {
  server = await startApiServer(
    {
      '/v1/responses': [
        responsesReply(1, { id: 'call_notes', path: 'notes.txt' }),
        responsesReply(2, { id: 'call_todo', path: 'todo.txt' }),
        responsesReply(3),
        responsesReply(4),
      ],
      '/v1/messages': [
        anthropicReply(1, { id: 'toolu_notes', path: 'notes.txt' }),
        anthropicReply(2, { id: 'toolu_todo', path: 'todo.txt' }),
        anthropicReply(3),
      ],
    },
    {
      '/v1/chat/completions': providerRefusal('openai.json').sse,
      '/v1/responses': readFileSync(path.join(FIXTURES, 'responses-api', 'refusal.sse'), 'utf8'),
      '/v1/messages': readFileSync(path.join(FIXTURES, 'anthropic-messages', 'refusal.sse'), 'utf8'),
    },
  );
  const anthropic = new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 });
  harness = await startHarness({
    modelBaseUrl: `${server.url}/v1`,
    wires: { anthropic: anthropicWire(anthropic, { thinkingBudgetTokens: 2048 }) },
    webhooks: [
      { url: `${server.url}${HOOKS}`, events: ['run_finished'], secret: 'model-apis-webhook-secret' },
    ],
  });
  await writeFile(path.join(harness.workspace, 'notes.txt'), 'the notes');
  await writeFile(path.join(harness.workspace, 'todo.txt'), 'the todo list');
});

afterAll(async () => {
  await harness?.close();
  await server?.close();
});

const requestsTo = (route: string) =>
  server.requests.filter((request) => request.path === route).map((r) => r.body);

test('Responses API: reasoning items go back, encrypted, on every later call of the tool loop', async () => {
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Read my notes, then my todo list.', { options: { modelApi: 'responses' } });
  const finished = await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Both files read.' });
  expect(finished.usage).toMatchObject({ tokens: 6_150, cachedInputTokens: 2_700, reasoningTokens: 90 });

  const [first, second, third] = requestsTo('/v1/responses');
  for (const request of [first, second, third]) {
    expect(request).toMatchObject({ store: false, include: ['reasoning.encrypted_content'], stream: true });
    expect(request!.instructions).toMatch(/^You are an agent working for a person through tools\./);
    expect(request!.tools).toContainEqual(
      expect.objectContaining({ type: 'function', name: 'read', strict: false }),
    );
  }
  const reasoning = (turn: number) => ({
    type: 'reasoning',
    id: `rs_${turn}`,
    summary: [{ type: 'summary_text', text: `Thought ${turn}.` }],
    encrypted_content: `enc_${turn}`,
  });
  const loop = [
    { role: 'user', content: 'Read my notes, then my todo list.' },
    reasoning(1),
    { type: 'function_call', call_id: 'call_notes', name: 'read', arguments: '{"path":"notes.txt"}' },
    { type: 'function_call_output', call_id: 'call_notes', output: expect.stringContaining('the notes') },
  ];
  expect(first!.input).toEqual([loop[0]]);
  expect(second!.input).toEqual(loop);
  expect(third!.input).toEqual([
    ...loop,
    reasoning(2),
    { type: 'function_call', call_id: 'call_todo', name: 'read', arguments: '{"path":"todo.txt"}' },
    { type: 'function_call_output', call_id: 'call_todo', output: expect.stringContaining('the todo list') },
  ]);

  // The answer's reasoning goes back followed by the output message it came with, id and all,
  // as the workflow kept it: without that message the API refuses the reasoning item.
  const next = await ask(harness.agent, id, 'Thanks.');
  expect(next.finished.outcome).toBe('answered');
  const fourth = requestsTo('/v1/responses')[3]!;
  expect((fourth.input as unknown[]).slice(-3)).toEqual([
    reasoning(3),
    {
      type: 'message',
      id: 'msg_3',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Both files read.', annotations: [] }],
    },
    { role: 'user', content: 'Thanks.' },
  ]);
});

test("Anthropic's Messages API: signed thinking goes back before its tool use, and the cache is marked where the docs put it", async () => {
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Read my notes, then my todo list.', { options: { modelApi: 'anthropic' } });
  const finished = await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Both files read.' });
  // Anthropic's input_tokens leave the cache out: 100 fresh + cache reads + 300 written, per call.
  expect(finished.usage).toMatchObject({ tokens: 3 * 400 + 6_000 + 140, cachedInputTokens: 6_000 });

  const calls = server.requests.filter((request) => request.path === '/v1/messages');
  expect(calls).toHaveLength(3);
  for (const { body, headers } of calls) {
    expect(headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(body).toMatchObject({ stream: true, thinking: { type: 'enabled', budget_tokens: 2048 } });
    // Three breakpoints: the system prompt, the last tool, the transcript's last block.
    expect(JSON.stringify(body).match(/"cache_control"/g)).toHaveLength(3);
    const system = body.system as Array<Record<string, unknown>>;
    expect(system).toEqual([
      {
        type: 'text',
        text: expect.stringMatching(/^You are an agent/),
        cache_control: { type: 'ephemeral' },
      },
    ]);
    const tools = body.tools as Array<Record<string, unknown>>;
    expect(tools.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    const messages = body.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(messages.at(-1)!.content.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
  }
  const thinking = (turn: number) => ({
    type: 'thinking',
    thinking: `Thought ${turn}.`,
    signature: `sig_${turn}`,
  });
  const assistantTurns = (index: number) =>
    (calls[index]!.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>)
      .filter((message) => message.role === 'assistant')
      .map((message) => message.content.map(({ cache_control: _mark, ...block }) => block));
  expect(assistantTurns(1)).toEqual([
    [thinking(1), { type: 'tool_use', id: 'toolu_notes', name: 'read', input: { path: 'notes.txt' } }],
  ]);
  expect(assistantTurns(2)).toEqual([
    [thinking(1), { type: 'tool_use', id: 'toolu_notes', name: 'read', input: { path: 'notes.txt' } }],
    [thinking(2), { type: 'tool_use', id: 'toolu_todo', name: 'read', input: { path: 'todo.txt' } }],
  ]);
  const lastUser = (
    calls[2]!.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>
  ).at(-1)!;
  expect(lastUser).toMatchObject({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_todo' }],
  });
});

test.each([
  ['chat', providerRefusal('openai.json').refusal],
  ['responses', "I'm sorry, but I can't assist with that request."],
  ['anthropic', 'This request was declined because it could enable cyber harm.'],
] as const)(
  "a refusal through the %s API ends the run as refused, with the provider's words in status, the console and its webhook",
  async (api, words) => {
    assertCliBuilt();
    const id = `conv-${randomUUID()}`;
    await harness.agent.send(id, REFUSE, { options: { modelApi: api } });
    const finished = await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
    expect(finished).toMatchObject({ outcome: 'refused', refusal: words });
    expect(await harness.agent.status(id)).toMatchObject({
      lastRun: { run: 1, outcome: 'refused', refusal: words },
    });

    const status = await runCli(['status', id], {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
      AGENT_TASK_QUEUE: harness.taskQueue,
    });
    expect(status.stdout).toContain(`  last run 1: refused by the model's provider: ${words}\n`);

    const { messages } = await harness.agent.transcriptTail(id, 10);
    const page = conversationRegion(
      {
        conversationId: id,
        agentId: 'default',
        status: 'idle',
        runs: 1,
        transcript: messages,
        from: 0,
        pending: [],
      },
      'csrf',
    ).text;
    expect(page).toContain(`The model's provider refused to answer: <q>${escapeHtml(words)}</q>`);

    const hook = await waitFor(
      async () => requestsTo(HOOKS).find((body) => body.conversationId === id),
      `the run_finished webhook of ${id}`,
    );
    expect(hook).toMatchObject({
      type: 'run_finished',
      data: { run: 1, outcome: 'refused', refusal: words },
    });
  },
);
