import { randomUUID } from 'node:crypto';
import nock from 'nock';
import { UpdateRefusedError } from '../../src/shared/conversation-errors';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { followToEnd } from '../support/ask';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * Tools a page offers (client tools) and the AG-UI endpoint on the gateway: the model calls a
 * page's tool, the run waits in the workflow for the page's result, and takes it once.
 */
let harness: TestHarness;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL });
});

afterEach(() => nock.cleanAll());

afterAll(async () => {
  await harness?.close();
  nock.enableNetConnect();
});

const pickColor = {
  name: 'pick_color',
  description: 'Asks the user for a color',
  parameters: { type: 'object', properties: { hint: { type: 'string' } } },
};

test('a client tool call waits in the workflow for its sender, takes the result once, and the model reads it', async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_page', name: 'pick_color', arguments: { hint: 'warm' } }] },
    { text: 'You picked red.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'pick a color', { clientTools: [pickColor] });
  const pending = await waitFor(async () => {
    const calls = await harness.agent.pendingClientToolCalls(id);
    return calls.length ? calls : undefined;
  }, 'the client call to wait');
  expect(pending).toEqual([
    expect.objectContaining({
      toolCallId: 'call_page',
      toolName: 'pick_color',
      arguments: '{"hint":"warm"}',
    }),
  ]);
  expect(script.requests[0]!.tools!.map((tool) => tool.function.name)).toContain('pick_color');

  const receipt = await harness.agent.answerClientTool(id, {
    toolCallId: 'call_page',
    text: 'red',
    by: 'page',
  });
  expect(receipt).toEqual({ toolCallId: 'call_page', toolName: 'pick_color' });
  // Delivered again (the same or another result), the call is answered as the first delivery was.
  await expect(
    harness.agent.answerClientTool(id, { toolCallId: 'call_page', text: 'blue', by: 'page' }),
  ).resolves.toEqual(receipt);
  const { finished } = await followToEnd(harness.agent, sent);
  expect(finished.answer).toBe('You picked red.');
  await expect(
    harness.agent.answerClientTool(id, { toolCallId: 'call_page', text: 'blue' }),
  ).resolves.toEqual(receipt);

  const { transcript } = await harness.agent.state(id);
  expect(transcript[0]).not.toHaveProperty('clientTools');
  expect(transcript[2]).toMatchObject({ role: 'toolResult', content: [{ type: 'text', text: 'red' }] });
  expect(script.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'red' });
});

test('a result for a call nobody waits for is refused, and a client tool cannot take a worker tool name', async () => {
  const script = nockModel([{ text: 'done' }]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'hello', {
    clientTools: [{ ...pickColor, name: 'read' }, pickColor],
  });
  const { finished } = await followToEnd(harness.agent, sent);
  expect(finished.answer).toBe('done');
  const offered = script.requests[0]!.tools!.map((tool) => tool.function.name);
  expect(offered.filter((name) => name === 'read')).toHaveLength(1);
  expect(offered).toContain('pick_color');
  const events = await harness.agent.events(id);
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'warning', message: expect.stringContaining('read left out') }),
  );
  await expect(harness.agent.answerClientTool(id, { toolCallId: 'nobody', text: 'x' })).rejects.toThrow(
    UpdateRefusedError,
  );
});
