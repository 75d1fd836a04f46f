import { randomUUID } from 'node:crypto';
import type { PendingApproval } from '../../src/shared/approvals';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import { UpdateRefusedError } from '../../src/shared/conversation-errors';
import { ask, followToEnd } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool, recordTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';

const harness = useNockedHarness([echoTool, recordTool]);
const agent = () => harness().agent;
const newId = () => `conv-${randomUUID()}`;
const echoCall = (id: string) => ({ id, name: 'echo', arguments: { text: id } });

function send(id: string, text: string, options: ConversationOptionsInput) {
  return agent().send(id, text, { options });
}

function pendingDecision(id: string, toolCallId = 'budget-1') {
  return waitFor<PendingApproval>(
    async () => (await agent().pendingApprovals(id)).find((pending) => pending.toolCallId === toolCallId),
    `a decision pending for ${toolCallId}`,
  );
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(UpdateRefusedError);
  return (error as UpdateRefusedError).reason;
}

test('without a budget nothing pauses, and spending is still counted', async () => {
  nockModel([{ toolCalls: [echoCall('call_free')] }, { text: 'Echoed.' }]);
  const id = newId();
  const { finished } = await ask(agent(), id, 'Echo something.');
  expect(finished).toMatchObject({ outcome: 'answered', usage: { tokens: 30, toolCalls: 1 } });
  expect((await agent().status(id)).budget).toMatchObject({
    used: { tokens: 30, toolCalls: 1 },
    run: { run: 1, tokens: 30, toolCalls: 1 },
    limits: {},
  });
});

test('a tool-call budget holds the call that would pass it; a raise must name tool calls, then it runs', async () => {
  const script = nockModel([
    { toolCalls: [echoCall('call_a'), echoCall('call_b'), echoCall('call_c')] },
    { text: 'Three echoes.' },
  ]);
  const id = newId();
  const sent = await send(id, 'Echo three times.', { budget: { toolCalls: 2 } });
  expect(await pendingDecision(id)).toMatchObject({
    toolName: 'budget',
    budget: { kind: 'toolCalls', used: 2, limit: 2, defaultRaise: 2 },
  });

  const decision = { toolCallId: 'budget-1', by: 'alice' } as const;
  expect(
    await refusal(agent().approve(id, { ...decision, decision: 'allow_once', raise: { tokens: 10 } })),
  ).toBe('the run is paused at its tool-call budget: the raise must name toolCalls, and only it');
  expect(
    await refusal(agent().approve(id, { ...decision, decision: 'reject_once', raise: { toolCalls: 1 } })),
  ).toBe('a rejection stops the run: it cannot raise the budget');
  expect(await agent().pendingApprovals(id)).toHaveLength(1);

  await agent().approve(id, { ...decision, decision: 'allow_once', raise: { toolCalls: 1 } });
  const { finished } = await followToEnd(agent(), sent);
  expect(finished).toMatchObject({ outcome: 'answered', usage: { toolCalls: 3 } });
  const { transcript, budget } = await agent().state(id);
  expect(
    transcript
      .filter((message) => message.role === 'toolResult')
      .map((message) => [message.toolCallId, message.status]),
  ).toEqual([
    ['call_a', 'ok'],
    ['call_b', 'ok'],
    ['call_c', 'ok'],
  ]);
  expect(budget?.limits).toEqual({ toolCalls: 3 });
  expect(script.remaining).toBe(0);
});

test('a rejected tool-call budget answers the held call as blocked and ends the run before the next model call', async () => {
  const script = nockModel([{ toolCalls: [echoCall('call_one'), echoCall('call_two')] }]);
  const id = newId();
  const sent = await send(id, 'Echo twice.', { budget: { toolCalls: 1 } });
  await pendingDecision(id);
  await agent().approve(id, { toolCallId: 'budget-1', decision: 'reject_once', by: 'carol' });

  const { finished, seen } = await followToEnd(agent(), sent);
  expect(finished).toMatchObject({ outcome: 'budget_exhausted', usage: { tokens: 15, toolCalls: 1 } });
  expect(seen.find((event) => event.type === 'budget_exhausted')).toMatchObject({
    budget: 'toolCalls',
    used: 1,
    limit: 1,
    by: 'carol',
  });
  const results = (await agent().state(id)).transcript.filter((message) => message.role === 'toolResult');
  expect(results.map((message) => [message.toolCallId, message.status, message.blockedBy])).toEqual([
    ['call_one', 'ok', undefined],
    ['call_two', 'blocked', 'budget'],
  ]);
  expect(script.requests).toHaveLength(1);
  expect((await agent().status(id)).status).toBe('idle');
});

/** The tool calls of a conversation's transcript, with how each ended. */
async function results(id: string) {
  const { transcript } = await agent().state(id);
  return transcript
    .filter((message) => message.role === 'toolResult')
    .map((message) => [message.toolCallId, message.status]);
}

/** The decisions the conversation asked for, in order. */
async function questionsAsked(id: string) {
  const events = await agent().events(id);
  return events.flatMap((event) => (event.type === 'approval_requested' ? [event.toolCallId] : []));
}

const pastTheBudgetTwice = [echoCall('call_within'), echoCall('call_past_1'), echoCall('call_past_2')];

test('two calls of one answer past the tool-call budget wait on one pause, and a raise for both lets both run', async () => {
  nockModel([{ toolCalls: pastTheBudgetTwice }, { text: 'Three echoes.' }]);
  const id = newId();
  const sent = await send(id, 'Echo three times.', { budget: { toolCalls: 1 } });
  await pendingDecision(id);
  // The second call past the budget waits for the first one's pause instead of asking again.
  expect((await agent().pendingApprovals(id)).map((pending) => pending.toolCallId)).toEqual(['budget-1']);

  await agent().approve(id, {
    toolCallId: 'budget-1',
    decision: 'allow_once',
    by: 'alice',
    raise: { toolCalls: 2 },
  });
  expect((await followToEnd(agent(), sent)).finished).toMatchObject({
    outcome: 'answered',
    usage: { toolCalls: 3 },
  });
  expect(await results(id)).toEqual([
    ['call_within', 'ok'],
    ['call_past_1', 'ok'],
    ['call_past_2', 'ok'],
  ]);
  expect(await questionsAsked(id)).toEqual(['budget-1']);
});

test('two calls of one answer past the tool-call budget wait on one pause, and its reject blocks both', async () => {
  nockModel([{ toolCalls: pastTheBudgetTwice }]);
  const id = newId();
  const sent = await send(id, 'Echo three times.', { budget: { toolCalls: 1 } });
  await pendingDecision(id);
  expect((await agent().pendingApprovals(id)).map((pending) => pending.toolCallId)).toEqual(['budget-1']);

  await agent().approve(id, { toolCallId: 'budget-1', decision: 'reject_once', by: 'carol' });
  expect((await followToEnd(agent(), sent)).finished).toMatchObject({
    outcome: 'budget_exhausted',
    usage: { toolCalls: 1 },
  });
  expect(await results(id)).toEqual([
    ['call_within', 'ok'],
    ['call_past_1', 'blocked'],
    ['call_past_2', 'blocked'],
  ]);
  expect(await questionsAsked(id)).toEqual(['budget-1']);
});

test('a deadline passed pauses before the model call; more time lets the run go on, and a stop ends it', async () => {
  const script = nockModel([{ text: 'In time now.' }]);
  const id = newId();
  // A millisecond: gone before the first model call, which waits for the worker's admission and tool listing.
  const sent = await send(id, 'Be quick.', { budget: { deadlineMs: 1 } });
  const paused = await pendingDecision(id);
  expect(paused.budget).toMatchObject({ kind: 'deadlineMs', limit: 1, defaultRaise: 1 });
  expect(paused.budget!.used).toBeGreaterThan(1);
  expect(script.requests).toHaveLength(0);
  await agent().approve(id, {
    toolCallId: 'budget-1',
    decision: 'allow_once',
    by: 'alice',
    raise: { deadlineMs: 10 * 60_000 },
  });
  expect((await followToEnd(agent(), sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'In time now.',
  });

  const late = newId();
  const stopped = await send(late, 'Be quick.', { budget: { deadlineMs: 1 } });
  await pendingDecision(late);
  await agent().approve(late, { toolCallId: 'budget-1', decision: 'reject_once', by: 'alice' });
  const { finished, seen } = await followToEnd(agent(), stopped);
  expect(finished.outcome).toBe('budget_exhausted');
  expect(seen.find((event) => event.type === 'budget_exhausted')).toMatchObject({
    budget: 'deadlineMs',
    by: 'alice',
  });
});

test('spending, the budget and its pauses carry over when a long run continues as new between turns', async () => {
  const turns = 10;
  nockModel(Array.from({ length: turns }, (_, turn) => ({ toolCalls: [echoCall(`call_turn_${turn + 1}`)] })));
  const id = newId();
  const handle = harness().client.workflow.getHandle(id);
  await agent().start(id, { maxHistoryEvents: 50, budget: { tokens: turns * 15 } });
  const firstRunId = (await handle.describe()).runId;
  const { startedAt } = await waitFor(async () => (await agent().status(id)).budget, 'the budget status');
  const sent = await agent().send(id, 'Echo, turn after turn.');

  // Ten calls of 15 tokens reach the budget only after the run has handed over to a fresh history.
  expect(await pendingDecision(id)).toMatchObject({
    run: 1,
    budget: { kind: 'tokens', used: 150, limit: 150 },
  });
  expect((await handle.describe()).runId).not.toBe(firstRunId);
  expect((await agent().status(id)).budget).toEqual({
    used: { tokens: 150, toolCalls: turns },
    run: { run: 1, tokens: 150, toolCalls: turns },
    limits: { tokens: 150 },
    startedAt,
  });
  await agent().approve(id, { toolCallId: 'budget-1', decision: 'reject_once', by: 'alice' });
  expect((await followToEnd(agent(), sent)).finished).toMatchObject({
    outcome: 'budget_exhausted',
    usage: { tokens: 150, toolCalls: turns },
  });
});

test('a raise is only for a budget pause: on a tool call’s approval it is refused, and the call still waits', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_rec', name: 'record', arguments: { value: 'x' } }] },
    { text: 'Recorded.' },
  ]);
  const id = newId();
  const sent = await send(id, 'Record x.', {});
  await pendingDecision(id, 'call_rec');
  expect(
    await refusal(
      agent().approve(id, {
        toolCallId: 'call_rec',
        decision: 'allow_once',
        by: 'alice',
        raise: { tokens: 5 },
      }),
    ),
  ).toBe('tool call call_rec is no budget pause: a raise does not apply to it');
  await agent().approve(id, { toolCallId: 'call_rec', decision: 'allow_once', by: 'alice' });
  expect((await followToEnd(agent(), sent)).finished).toMatchObject({ outcome: 'answered' });
});
