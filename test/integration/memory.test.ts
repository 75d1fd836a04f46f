import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { ask } from '../support/ask';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import type { ChatRequest } from '../support/scripted-model';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

/** Two workers on two task queues sharing one memory directory, as two deployments on one machine would. */
let memoryDir: string;
let first: TestHarness;
let second: TestHarness;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  memoryDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-it-'));
  first = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, memoryDir });
  second = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, memoryDir });
});
afterEach(() => nock.cleanAll());
afterAll(async () => {
  await Promise.all([first?.close(), second?.close()]);
  nock.cleanAll();
  nock.enableNetConnect();
});

const newId = () => `conv-${randomUUID()}`;
/** The JSON of the tool result the model received for `toolCallId`. */
function toolResultIn(request: ChatRequest, toolCallId: string): unknown {
  const message = request.messages.find((candidate) => candidate.tool_call_id === toolCallId);
  if (!message?.content) throw new Error(`no tool result for ${toolCallId}`);
  return JSON.parse(message.content);
}

test('memory written in one conversation is found by a later conversation of the same agent, on another worker', async () => {
  const script = nockModel([
    {
      toolCalls: [
        {
          id: 'call_write',
          name: 'memory_write',
          arguments: {
            key: 'deploy-day',
            text: 'Deploys happen on Tuesdays after the standup.',
            tags: ['ops'],
          },
        },
      ],
    },
    { text: 'Noted.' },
    {
      toolCalls: [
        { id: 'call_search', name: 'memory_search', arguments: { query: 'when do deploys happen' } },
      ],
    },
    { toolCalls: [{ id: 'call_get', name: 'memory_get', arguments: { key: 'deploy-day' } }] },
    { text: 'On Tuesdays.' },
    { toolCalls: [{ id: 'call_other', name: 'memory_search', arguments: { query: 'deploys' } }] },
    { text: 'I do not know.' },
  ]);
  const options = { agentId: 'team-a', approval: { mode: 'auto' as const } };

  const writer = newId();
  const wrote = await ask(first.agent, writer, 'Remember: we deploy on Tuesdays.', { options });
  expect(wrote.finished).toMatchObject({ outcome: 'answered', answer: 'Noted.' });
  expect(toolResultIn(script.requests[1]!, 'call_write')).toMatchObject({
    saved: 'deploy-day',
    replaced: false,
  });
  await first.agent.end(writer);

  const reader = newId();
  const read = await ask(second.agent, reader, 'When do we deploy?', { options });
  expect(read.finished).toMatchObject({ outcome: 'answered', answer: 'On Tuesdays.' });
  const search = toolResultIn(script.requests[3]!, 'call_search') as {
    results: Array<{ key: string; snippet: string }>;
  };
  expect(search.results[0]).toMatchObject({
    key: 'deploy-day',
    snippet: 'Deploys happen on Tuesdays after the standup.',
  });
  expect(toolResultIn(script.requests[4]!, 'call_get')).toMatchObject({
    key: 'deploy-day',
    text: 'Deploys happen on Tuesdays after the standup.',
    tags: ['ops'],
    conversationId: writer,
  });

  // Another agent's conversation on the same worker sees none of it.
  const stranger = await ask(second.agent, newId(), 'When do we deploy?', {
    options: { agentId: 'team-b', approval: { mode: 'auto' } },
  });
  expect(stranger.finished).toMatchObject({ outcome: 'answered' });
  expect(toolResultIn(script.requests[6]!, 'call_other')).toMatchObject({ notes: 0, results: [] });
  expect(script.exhausted).toBe(false);
});

test('memory_write asks for approval by default; memory_search does not', async () => {
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_w', name: 'memory_write', arguments: { text: 'unapproved note' } },
        { id: 'call_s', name: 'memory_search', arguments: { query: 'note' } },
      ],
    },
    { text: 'done' },
  ]);
  const id = newId();
  await first.agent.send(id, 'note something');
  const handle = first.client.workflow.getHandle(id);
  const waiting = await waitForEvent(handle, 'approval_requested');
  expect(waiting).toMatchObject({ toolName: 'memory_write', risk: 'medium' });
  await first.agent.approve(id, { toolCallId: 'call_w', decision: 'reject_once', by: 'tester' });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'answered' });
  const tools = script.requests[1]!.messages.filter((message) => message.role === 'tool');
  expect(JSON.parse(tools[0]!.content!)).toMatchObject({ status: 'blocked', tool: 'memory_write' });
  expect(JSON.parse(tools[1]!.content!)).toMatchObject({ notes: 0, results: [] });
});
