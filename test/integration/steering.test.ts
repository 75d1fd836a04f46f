import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import nock from 'nock';
import {
  type UserMessageInput,
  abortSignal,
  abortUpdate,
  stateQuery,
  steerUpdate,
} from '../../src/shared/conversation-api';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { tickerAborts, tickerTool } from '../support/test-tools';
import { eventsOf, waitForEvent, waitForHeartbeat } from '../support/wait-for-event';

const harness = useNockedHarness([tickerTool]);
const newId = () => `conv-${randomUUID()}`;
const handleOf = (id: string) => harness().client.workflow.getHandle(id);
const steering = (text: string): { args: [UserMessageInput] } => ({
  args: [{ text, messageId: `steer-${randomUUID()}` }],
});

/** The model's view of the conversation on one request: role and text per message. */
const shapeOf = (request: ChatRequest) =>
  request.messages.map((message) => `${message.role}: ${message.content ?? ''}`);

/** A first model call that never answers: only its cancellation ends it (and no timer keeps Jest alive). */
function hangingModelCall() {
  nock('http://model.test')
    .post('/v1/chat/completions')
    .reply((_uri, _body, _never: unknown) => undefined);
}

test('steer during a long tool: the tool sees its abort, its partial result and the message reach the model', async () => {
  let secondRequest: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ id: 'call_tick', name: 'ticker', arguments: { ticks: 600 } }] },
    (request) => {
      secondRequest = request;
      return { text: 'Understood, stopping there.' };
    },
  ]);
  const id = newId();
  await harness().agent.send(id, 'Count to 600');
  const handle = handleOf(id);
  await waitForHeartbeat(handle, (details) => /tick [3-9]/.test(JSON.stringify(details)));

  const receipt = await handle.executeUpdate(steerUpdate, steering('Stop counting, that is enough'));
  expect(receipt.interrupting).toBe(true);

  const finished = await waitForEvent(handle, 'run_finished');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Understood, stopping there.' });
  expect(tickerAborts.has('call_tick')).toBe(true);
  const events = await eventsOf(handle);
  expect(events.find((e) => e.type === 'tool_execution_end')).toMatchObject({ aborted: true });
  expect(events.find((e) => e.type === 'steered')).toMatchObject({
    text: 'Stop counting, that is enough',
    interrupted: ['call_tick'],
  });

  const shape = shapeOf(secondRequest!);
  expect(shape.slice(-2)).toEqual([
    expect.stringMatching(/^tool: ticked \d+ of 600\n\[interrupted before it finished/),
    'user: Stop counting, that is enough',
  ]);
  const ticked = Number(/ticked (\d+)/.exec(shape.at(-2)!)![1]);
  expect(ticked).toBeGreaterThanOrEqual(3);
  expect(ticked).toBeLessThan(600);
});

test('a steer during the model call waits for it, then the calls it asked for are not run', async () => {
  let secondRequest: ChatRequest | undefined;
  nockModel(
    [
      { toolCalls: [{ id: 'call_never', name: 'ticker', arguments: { ticks: 5 } }] },
      (request) => {
        secondRequest = request;
        return { text: 'Switched.' };
      },
    ],
    { delayFirstMs: 1_500 },
  );
  const id = newId();
  await harness().agent.send(id, 'Count to 5');
  const handle = handleOf(id);
  await waitForEvent(handle, 'run_started');
  await handle.executeUpdate(steerUpdate, steering('Actually, do not count'));

  await waitForEvent(handle, 'run_finished');
  const shape = shapeOf(secondRequest!);
  expect(shape.slice(-2)).toEqual([
    expect.stringContaining('"status":"aborted"'),
    'user: Actually, do not count',
  ]);
  const events = await eventsOf(handle);
  expect(events.some((e) => e.type === 'tool_execution_start')).toBe(false);
  expect(events.find((e) => e.type === 'steered')).toMatchObject({ interrupted: ['call_never'] });
});

test('abort during the model call ends the run; the conversation takes the next message', async () => {
  hangingModelCall();
  const script = nockModel([(request) => ({ text: `I see ${request.messages.length} messages.` })]);
  const id = newId();
  await harness().agent.send(id, 'Think hard');
  const handle = handleOf(id);
  await waitForHeartbeat(handle, (details) => (details as { kind?: string }).kind === 'model');

  const receipt = await handle.executeUpdate(abortUpdate, {
    args: [{ reason: 'taking too long', by: 'ops' }],
  });
  expect(receipt).toEqual({ run: 1 });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'aborted' });
  expect(await waitForEvent(handle, 'aborted')).toMatchObject({
    reason: 'taking too long',
    by: 'ops',
    interrupted: [],
  });

  await harness().agent.send(id, 'Now something quick');
  const answered = await waitForEvent(handle, 'run_finished', (e) => e.run === 2);
  // The aborted call added nothing: the model sees the default system prompt and the two user messages.
  expect(answered).toMatchObject({ outcome: 'answered', answer: 'I see 3 messages.' });
  expect(script.requests).toHaveLength(1);
  const state = await handle.query(stateQuery);
  expect(state.transcript.map((m) => m.role)).toEqual(['user', 'user', 'assistant']);
});

test('abort during tools: every call gets an aborted result and the conversation goes on', async () => {
  let laterRequest: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [
        { id: 'call_a', name: 'ticker', arguments: { ticks: 600 } },
        { id: 'call_b', name: 'ticker', arguments: { ticks: 600 } },
      ],
    },
    (request) => {
      laterRequest = request;
      return { text: 'Fresh start.' };
    },
  ]);
  const id = newId();
  await harness().agent.send(id, 'Count twice');
  const handle = handleOf(id);
  await waitForHeartbeat(handle, (details) => /tick 2/.test(JSON.stringify(details)));

  // The signal form, as a service with only the Temporal CLI would send it.
  await handle.signal(abortSignal, { reason: 'changed my mind' });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'aborted' });
  const aborted = await waitForEvent(handle, 'aborted');
  expect(aborted.interrupted.sort()).toEqual(['call_a', 'call_b']);
  expect(tickerAborts.has('call_a') && tickerAborts.has('call_b')).toBe(true);

  await harness().agent.send(id, 'Start over');
  await waitForEvent(handle, 'run_finished', (e) => e.run === 2);
  const tools = laterRequest!.messages.filter((m) => m.role === 'tool');
  expect(tools.map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b']);
  for (const message of tools) expect(message.content).toMatch(/^ticked \d+ of 600\n\[interrupted/);
});

test('abort with no run in progress is refused by the update and ignored by the signal', async () => {
  nockModel([{ text: 'Hi.' }]);
  const id = newId();
  await harness().agent.send(id, 'Hello');
  const handle = handleOf(id);
  await waitForEvent(handle, 'run_finished');

  const refused = await handle.executeUpdate(abortUpdate, { args: [{}] }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
  expect((refused as WorkflowUpdateFailedError).cause?.message).toBe('no run is in progress');
  await handle.signal(abortSignal);
  expect(await waitForEvent(handle, 'error')).toMatchObject({
    message: 'abort ignored: no run is in progress',
  });
});

test('a steer with no run in progress starts one', async () => {
  nockModel([{ text: 'Hi.' }, { text: 'Steered from idle.' }]);
  const id = newId();
  await harness().agent.send(id, 'Hello');
  const handle = handleOf(id);
  await waitForEvent(handle, 'run_finished');
  const receipt = await handle.executeUpdate(steerUpdate, steering('Go this way'));
  expect(receipt.interrupting).toBe(false);
  expect(await waitForEvent(handle, 'run_finished', (e) => e.run === 2)).toMatchObject({
    outcome: 'answered',
  });
});
