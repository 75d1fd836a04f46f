import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  rapMessageSignal,
  rapSubscriptionsQuery,
  rapViewsQuery,
  stateQuery,
} from '../../src/shared/conversation-api';
import { CANCEL_SUBSCRIPTION_TOOL_NAME, RECEIVE_EVENT_TOOL_NAME } from '../../src/shared/rap';
import { type AgentTool, defineTool, textResult } from '../../src/tools/tool';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

/**
 * The conversation's side of RAP, driven the way the worker's callback server drives it: a tool
 * result whose details say `subscription: true`, then `rapMessage` signals. The callback server
 * itself, and real RAP tool servers, are tested in rap.test.ts.
 */
const subscribeTool = defineTool({
  name: 'subscribe_builds',
  label: 'Subscribe to builds',
  description: 'Subscribes to build events.',
  parameters: z.object({ repo: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  async execute(toolCallId, params) {
    return textResult(`Subscribed to ${params.repo}`, { rap: { subscription: true, callId: toolCallId } });
  },
});
const cancelSubscriptionTool: AgentTool = defineTool({
  name: CANCEL_SUBSCRIPTION_TOOL_NAME,
  label: 'Cancel subscription',
  description: 'Cancels a subscription.',
  parameters: z.object({ tool_call_id: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  async execute() {
    throw new Error('the conversation answers cancel_subscription itself');
  },
});

const harness = useNockedHarness([subscribeTool, cancelSubscriptionTool]);

const toolMessages = (request: ChatRequest) => request.messages.filter((message) => message.role === 'tool');

test('a subscription event wakes an idle conversation and enters the transcript as a receive_event__injected call; final ends it', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  let eventRequest: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ id: 'call_sub', name: 'subscribe_builds', arguments: { repo: 'acme/api' } }] },
    { text: 'Subscribed.' },
    (request) => {
      eventRequest = request;
      return { text: 'Build 1 passed.' };
    },
    { text: 'That was the last build.' },
  ]);

  await harness().agent.send(id, 'Tell me about builds');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  expect(await handle.query(rapSubscriptionsQuery)).toEqual(['call_sub']);

  await handle.signal(rapMessageSignal, {
    type: 'subscription_event',
    toolCallId: 'call_sub',
    text: '{"build":1,"status":"passed"}',
  });
  const second = await waitForEvent(handle, 'run_finished', (event) => event.run === 2);
  expect(second).toMatchObject({ outcome: 'answered', answer: 'Build 1 passed.', messageIds: [] });
  const injected = eventRequest!.messages.find((message) =>
    message.tool_calls?.some((call) => call.function.name === RECEIVE_EVENT_TOOL_NAME),
  );
  expect(JSON.parse(injected!.tool_calls![0]!.function.arguments)).toEqual({
    original_tool_name: 'subscribe_builds',
    original_tool_call_id: 'call_sub',
    original_args: { repo: 'acme/api' },
  });
  expect(toolMessages(eventRequest!).at(-1)).toMatchObject({
    tool_call_id: injected!.tool_calls![0]!.id,
    content: '{"build":1,"status":"passed"}',
  });

  await handle.signal(rapMessageSignal, {
    type: 'subscription_event',
    toolCallId: 'call_sub',
    text: 'build 2: the last one',
    final: true,
  });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 3);
  expect(await handle.query(rapSubscriptionsQuery)).toEqual([]);

  // After `final`, events of that subscription change nothing.
  await handle.signal(rapMessageSignal, { type: 'subscription_event', toolCallId: 'call_sub', text: 'late' });
  await handle.signal(rapMessageSignal, {
    type: 'view_update',
    toolCallId: 'call_sub',
    viewType: 'diff',
    content: { patch: '+1' },
  });
  expect(await waitFor(async () => (await handle.query(rapViewsQuery)).diff, 'the view')).toEqual({
    patch: '+1',
  });
  const state = await handle.query(stateQuery);
  expect(state.runCount).toBe(3);
  expect(state.status).toBe('idle');
  const subscriptionEvents = (await eventsOf(handle)).filter((event) => event.type === 'subscription_event');
  expect(subscriptionEvents.map((event) => event.type === 'subscription_event' && event.final)).toEqual([
    false,
    true,
  ]);
});

test('cancel_subscription ends only this conversation’s active subscriptions; receive_event__injected cannot be called', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  let results: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ id: 'call_sub2', name: 'subscribe_builds', arguments: { repo: 'acme/web' } }] },
    {
      toolCalls: [
        { id: 'call_cancel', name: CANCEL_SUBSCRIPTION_TOOL_NAME, arguments: { tool_call_id: 'call_sub2' } },
        {
          id: 'call_cancel_unknown',
          name: CANCEL_SUBSCRIPTION_TOOL_NAME,
          arguments: { tool_call_id: 'nope' },
        },
        { id: 'call_fake_event', name: RECEIVE_EVENT_TOOL_NAME, arguments: {} },
      ],
    },
    (request) => {
      results = request;
      return { text: 'Done.' };
    },
  ]);

  await harness().agent.send(id, 'Subscribe, then stop');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);

  const byId = new Map(toolMessages(results!).map((message) => [message.tool_call_id, message.content]));
  expect(byId.get('call_cancel')).toBe("Subscription 'call_sub2' cancelled successfully.");
  expect(byId.get('call_cancel_unknown')).toMatch(/no active subscription started by tool call nope/);
  expect(byId.get('call_fake_event')).toMatch(/cannot be called/);
  expect(await handle.query(rapSubscriptionsQuery)).toEqual([]);
});

test('a user_choice is shown as an event; an answer out of range or for no pending choice is refused', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  nockModel([{ text: 'Hello.' }]);
  await harness().agent.send(id, 'Hi');
  await waitForEvent(handle, 'run_finished');

  await handle.signal(rapMessageSignal, {
    type: 'user_choice',
    toolCallId: 'call_choice',
    prompt: 'Deploy where?',
    choices: ['staging', 'production'],
    default: 0,
    responseUrl: 'http://127.0.0.1:9/choice',
  });
  const asked = await waitForEvent(handle, 'user_choice_requested');
  expect(asked).toMatchObject({ toolCallId: 'call_choice', prompt: 'Deploy where?', default: 0 });

  await expect(
    harness().agent.answerUserChoice(id, { toolCallId: 'call_choice', selected: 2 }),
  ).rejects.toThrow(/out of range/);
  await expect(harness().agent.answerUserChoice(id, { toolCallId: 'call_other' })).rejects.toThrow(
    /no choice is pending/,
  );
  // Malformed messages are refused without touching the conversation.
  await handle.signal(rapMessageSignal, {
    type: 'user_choice',
    toolCallId: 'x',
    prompt: 'p',
    choices: [],
  } as never);
  await waitForEvent(handle, 'error', (event) => /rapMessage ignored/.test(event.message));
});
