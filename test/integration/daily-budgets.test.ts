import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  AGENT_DAILY_BUDGET_WORKFLOW_TYPE,
  type AgentDailyBudgetInput,
  spendDailyTokensUpdate,
  agentDailyBudgetStatusQuery,
  agentDailyBudgetWorkflowId,
  utcDayOf,
} from '../../src/shared/daily-budget';
import { defaultPayloadConverter } from '@temporalio/common';
import { readConversationHistory } from '../../src/cli/read-conversation-history';
import { buildTimeline } from '../../src/history/build-timeline';
import type { ModelCallItem } from '../../src/history/timeline';
import type { PendingApproval } from '../../src/shared/approvals';
import { UpdateRefusedError } from '../../src/shared/conversation-errors';
import { compactUpdate } from '../../src/shared/conversation-api';
import { budgetExhaustedWords } from '../../src/client/budget-words';
import { ask, followToEnd } from '../support/ask';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { echoTool } from '../support/test-tools';
import { type BlobStore, DirectoryBlobStore } from '../../src/worker/blob-store';
import { LargePayloadCodec } from '../../src/worker/large-payload-codec';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/** The scripted model reports 15 tokens (10 in, 5 out) for every call. */
const TOKENS_PER_CALL = 15;
const echoStep = (step: string) => ({
  text: `Step ${step}.`,
  toolCalls: [{ id: `call_${step}`, name: 'echo', arguments: { text: step } }],
});

let model: ScriptedModelServer | undefined;
let harness: TestHarness | undefined;
/** Another worker of the fleet, on a task queue of its own. */
let otherWorker: TestHarness | undefined;
afterEach(async () => {
  await otherWorker?.close();
  otherWorker = undefined;
  await harness?.close();
  await model?.close();
  harness = undefined;
  model = undefined;
});

function pendingDecision(conversationId: string, toolCallId = 'budget-1') {
  return waitFor<PendingApproval>(
    async () =>
      (await harness!.agent.pendingApprovals(conversationId)).find(
        (pending) => pending.toolCallId === toolCallId,
      ),
    `a decision pending for ${toolCallId} in ${conversationId}`,
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

test('two conversations of an agent on two workers share its daily budget: once spent, the next model call of either waits instead of calling the model; a reject stops it; another agent is not held', async () => {
  const agentId = `daily-${randomUUID().slice(0, 8)}`;
  const otherAgentId = `other-${randomUUID().slice(0, 8)}`;
  model = await startScriptedModelServer([
    // The first conversation: three tool calls and an answer, 60 tokens.
    echoStep('a1'),
    echoStep('a2'),
    echoStep('a3'),
    { text: 'First done.' },
    // The second: three more calls reach 105 of 100; its fourth is not made.
    echoStep('b1'),
    echoStep('b2'),
    echoStep('b3'),
    // The other agent's conversation.
    { text: 'Other agent answered.' },
  ]);
  harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    tools: [echoTool],
    dailyTokenBudgets: { agents: { [agentId]: 100 } },
  });
  otherWorker = await startHarness({
    modelBaseUrl: model.baseUrl,
    tools: [echoTool],
    dailyTokenBudgets: { agents: { [agentId]: 100 } },
  });
  const { agent, client } = harness;
  const first = `conv-${randomUUID()}`;
  const second = `conv-${randomUUID()}`;

  const firstRun = await ask(agent, first, 'Echo three times.', { options: { agentId } });
  expect(firstRun.finished).toMatchObject({ outcome: 'answered', usage: { tokens: 4 * TOKENS_PER_CALL } });
  expect((await agent.status(first)).budget?.daily).toEqual({ agentId, tokensPerDay: 100 });

  // The second conversation runs on another worker of the fleet, which finds the same ledger.
  const sent = await otherWorker.agent.send(second, 'Echo until told to stop.', { options: { agentId } });
  const paused = await pendingDecision(second);
  expect(paused).toMatchObject({
    toolName: 'budget',
    run: 1,
    budget: { kind: 'dailyTokens', agentId, used: 7 * TOKENS_PER_CALL, limit: 100, defaultRaise: 0 },
  });
  expect(paused.budget!.resumesAt).toBeGreaterThan(Date.now() - 60_000);
  expect(model.script.requests).toHaveLength(7);

  // The first conversation's next run is held too, before its first model call.
  const again = await agent.send(first, 'One more echo.');
  expect(await pendingDecision(first)).toMatchObject({
    run: 2,
    budget: { kind: 'dailyTokens', used: 105, limit: 100 },
  });
  expect(model.script.requests).toHaveLength(7);

  // The ledger of the agent's day, as every worker of the fleet finds it.
  const day = utcDayOf(paused.requestedAt);
  const ledger = client.workflow.getHandle(agentDailyBudgetWorkflowId(agentId, day));
  expect((await ledger.describe()).type).toBe(AGENT_DAILY_BUDGET_WORKFLOW_TYPE);
  expect(await ledger.query(agentDailyBudgetStatusQuery)).toEqual({ agentId, day, tokens: 105 });
  expect(await agent.agentSpentToday(agentId, paused.requestedAt)).toEqual({ agentId, day, tokens: 105 });
  expect(await agent.agentSpentToday(otherAgentId, paused.requestedAt)).toEqual({
    agentId: otherAgentId,
    day,
    tokens: 0,
  });

  // A person deciding cannot raise the operator's cap.
  const allowRefused = await refusal(
    agent.approve(second, { toolCallId: 'budget-1', decision: 'allow_once', by: 'alice' }),
  );
  expect(allowRefused).toContain("only the worker's operator sets (AGENT_BUDGET_TOKENS_PER_DAY)");
  expect(
    await refusal(
      agent.approve(second, {
        toolCallId: 'budget-1',
        decision: 'allow_once',
        by: 'alice',
        raise: { tokens: 1_000 },
      }),
    ),
  ).toBe(allowRefused);

  // Another agent's conversation is not held.
  const other = await ask(agent, `conv-${randomUUID()}`, 'Answer.', { options: { agentId: otherAgentId } });
  expect(other.finished).toMatchObject({ outcome: 'answered', answer: 'Other agent answered.' });
  expect(model.script.requests).toHaveLength(8);

  // A reject stops the run, saying why.
  await agent.approve(second, {
    toolCallId: 'budget-1',
    decision: 'reject_once',
    by: 'bob',
    reason: 'enough',
  });
  const { finished, seen } = await followToEnd(agent, sent);
  expect(finished).toMatchObject({ outcome: 'budget_exhausted', usage: { tokens: 45 } });
  const stopped = seen.find((event) => event.type === 'budget_exhausted');
  expect(stopped).toMatchObject({ budget: 'dailyTokens', used: 105, limit: 100, by: 'bob' });
  expect(budgetExhaustedWords(stopped as Extract<typeof stopped, { type: 'budget_exhausted' }>)).toBe(
    "run stopped: agent's daily token budget exhausted (105 of 100 tokens used today by the agent); stopped by bob: enough",
  );

  await agent.approve(first, { toolCallId: 'budget-1', decision: 'reject_once', by: 'bob' });
  expect((await followToEnd(agent, again)).finished).toMatchObject({ outcome: 'budget_exhausted' });
  expect(model.script.requests).toHaveLength(8);
  const modelCalls = (await client.workflow.getHandle(second).fetchHistory()).events?.filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  // Three answered calls and the one the spent day held back.
  expect(modelCalls).toHaveLength(4);
}, 120_000);

test("a run held by its agent's spent day goes on by itself when the next UTC day begins", async () => {
  const agentId = `daily-${randomUUID().slice(0, 8)}`;
  // The workers count days by this clock: two seconds before a midnight, moved on by the test.
  const midnight = Date.parse('2030-01-02T00:00:00Z');
  let now = midnight - 2_000;
  model = await startScriptedModelServer([echoStep('1'), echoStep('2'), { text: 'Done on the next day.' }]);
  harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    tools: [echoTool],
    dailyTokenBudgets: { default: 20, agents: {} },
    dailyTokenClock: () => now,
  });
  const { agent } = harness;
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Echo twice.', { options: { agentId } });
  expect(await pendingDecision(id)).toMatchObject({
    budget: { kind: 'dailyTokens', used: 2 * TOKENS_PER_CALL, limit: 20 },
  });
  expect(model.script.requests).toHaveLength(2);

  // The day turns: the run's timer (the two seconds to midnight) lets it call the model again.
  now = midnight + 1_000;
  const { finished, seen } = await followToEnd(agent, sent);
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Done on the next day.' });
  expect(seen.filter((event) => event.type === 'approval_decided')).toEqual(
    expect.arrayContaining([expect.objectContaining({ toolName: 'budget', by: 'next-day' })]),
  );
  expect(model.script.requests).toHaveLength(3);

  // The history reads as one run of three model calls, with the calls the spent day held back between.
  const timeline = buildTimeline(
    id,
    await readConversationHistory(harness.client, id),
    defaultPayloadConverter,
  );
  const modelCalls = timeline.items.filter((item): item is ModelCallItem => item.kind === 'model_call');
  const made = modelCalls.filter((call) => !call.text?.startsWith('(not made'));
  expect(made.map(({ run, iteration }) => ({ run, iteration }))).toEqual([
    { run: 1, iteration: 1 },
    { run: 1, iteration: 2 },
    { run: 1, iteration: 3 },
  ]);
  const heldBack = modelCalls.filter((call) => call.text?.startsWith('(not made'));
  expect(heldBack.length).toBeGreaterThan(0);
  for (const call of heldBack) {
    expect(call).toMatchObject({
      run: 1,
      iteration: 3,
      text: `(not made: agent ${agentId}'s daily token budget was spent)`,
    });
  }
}, 120_000);

test("a model call tried again after it reported its tokens counts once in its agent's day", async () => {
  const agentId = `daily-${randomUUID().slice(0, 8)}`;
  // A long answer that does not compress: its payload goes to the blob store.
  const longAnswer = randomBytes(36_000).toString('base64');
  model = await startScriptedModelServer([{ text: longAnswer }, { text: longAnswer }]);
  // The blob store refuses its first write: the first attempt's result, after the attempt reported its tokens.
  const blobs = new DirectoryBlobStore(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-blobs-')));
  let refusals = 1;
  const refusesFirstWrite: BlobStore = {
    put: (bytes) =>
      refusals-- > 0 ? Promise.reject(new Error('the blob store is unreachable')) : blobs.put(bytes),
    get: (key) => blobs.get(key),
  };
  harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    dailyTokenBudgets: { agents: { [agentId]: 1_000 } },
    dataConverter: {
      payloadCodecs: [new LargePayloadCodec(refusesFirstWrite, { offloadAboveBytes: 16 * 1024 })],
    },
  });
  const { agent, client } = harness;
  const id = `conv-${randomUUID()}`;

  const { finished } = await ask(agent, id, 'Say something long.', { options: { agentId } });

  expect(finished).toMatchObject({
    outcome: 'answered',
    answer: longAnswer,
    usage: { tokens: TOKENS_PER_CALL },
  });
  // One model call, tried twice: the first attempt's result could not be stored.
  const history = await client.workflow.getHandle(id).fetchHistory();
  const modelCalls = new Set(
    (history.events ?? [])
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => String(event.eventId)),
  );
  const attempts = (history.events ?? []).flatMap((event) => {
    const started = event.activityTaskStartedEventAttributes;
    return started && modelCalls.has(String(started.scheduledEventId))
      ? [{ attempt: started.attempt, lastFailure: started.lastFailure?.message }]
      : [];
  });
  expect(attempts).toEqual([
    expect.objectContaining({
      attempt: 2,
      lastFailure: expect.stringMatching(/^the blob store could not take/),
    }),
  ]);
  expect(model.script.requests).toHaveLength(2);
  // Both attempts reported the call's tokens; the day counts them once.
  expect((await agent.agentSpentToday(agentId)).tokens).toBe(TOKENS_PER_CALL);
}, 60_000);

test("an agent's ledger counts a repeated report once, and is started by whichever worker asks first", async () => {
  model = await startScriptedModelServer([]);
  harness = await startHarness({ modelBaseUrl: model.baseUrl, dailyTokenBudgets: { agents: {} } });
  const agentId = `ledger-${randomUUID().slice(0, 8)}`;
  const day = '2030-06-01';
  const spend = (request: { tokens: number; key?: string }) =>
    harness!.client.workflow.executeUpdateWithStart(spendDailyTokensUpdate, {
      args: [request],
      startWorkflowOperation: new WithStartWorkflowOperation<(input: AgentDailyBudgetInput) => Promise<void>>(
        AGENT_DAILY_BUDGET_WORKFLOW_TYPE,
        {
          workflowId: agentDailyBudgetWorkflowId(agentId, day),
          taskQueue: harness!.taskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ agentId, day }],
        },
      ),
    });
  expect(await spend({ tokens: 0 })).toEqual({ agentId, day, tokens: 0 });
  expect(await spend({ tokens: 15, key: 'conv-1/run-1/1' })).toEqual({ agentId, day, tokens: 15 });
  // The same activity reporting again (a retry after its report) counts once.
  expect(await spend({ tokens: 15, key: 'conv-1/run-1/1' })).toEqual({ agentId, day, tokens: 15 });
  expect(await spend({ tokens: 20, key: 'conv-2/run-1/1' })).toEqual({ agentId, day, tokens: 35 });
  await expect(spend({ tokens: -5 })).rejects.toThrow();
  expect(await spend({ tokens: 0 })).toEqual({ agentId, day, tokens: 35 });
}, 60_000);

test("an agent's ledger hands its day's tokens and the reports it has counted over to its next run", async () => {
  const agentId = `daily-${randomUUID().slice(0, 8)}`;
  // The workers count days by this clock, so the test knows which ledger they will find.
  const now = Date.parse('2030-03-02T12:00:00Z');
  const day = utcDayOf(now);
  model = await startScriptedModelServer([echoStep('1'), echoStep('2'), echoStep('3'), { text: 'Echoed.' }]);
  harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    tools: [echoTool],
    dailyTokenBudgets: { agents: { [agentId]: 10_000 } },
    dailyTokenClock: () => now,
  });
  const { agent, client } = harness;
  // Started before any call, so it continues as new every 20 events instead of when Temporal suggests.
  const input: AgentDailyBudgetInput = { agentId, day, maxHistoryEvents: 20 };
  const ledger = await client.workflow.start(AGENT_DAILY_BUDGET_WORKFLOW_TYPE, {
    workflowId: agentDailyBudgetWorkflowId(agentId, day),
    taskQueue: harness.taskQueue,
    args: [input],
  });
  // A call of another worker reported to the first run.
  const earlier = { tokens: 7, key: 'conv-earlier/run-1/1' };
  expect(await ledger.executeUpdate(spendDailyTokensUpdate, { args: [earlier] })).toMatchObject({
    tokens: 7,
  });

  // Four model calls, a read and a report each: the ledger continues as new on the way.
  const { finished } = await ask(agent, `conv-${randomUUID()}`, 'Echo three times.', {
    options: { agentId },
  });
  expect(finished).toMatchObject({ outcome: 'answered', usage: { tokens: 4 * TOKENS_PER_CALL } });
  const { runId } = await client.workflow.getHandle(ledger.workflowId).describe();
  expect(runId).not.toBe(ledger.firstExecutionRunId);

  const expected = { agentId, day, tokens: 7 + 4 * TOKENS_PER_CALL };
  expect(await agent.agentSpentToday(agentId, now)).toEqual(expected);
  // The earlier call's report, repeated (its activity tried again), reaches a later run: counted once.
  const latest = client.workflow.getHandle(ledger.workflowId);
  expect(await latest.executeUpdate(spendDailyTokensUpdate, { args: [earlier] })).toEqual(expected);
}, 60_000);

test("a compaction's summary counts in the agent's day as in the conversation's budget", async () => {
  const agentId = `daily-${randomUUID().slice(0, 8)}`;
  model = await startScriptedModelServer([
    { text: 'First answer.' },
    { text: 'Second answer.' },
    { text: 'The user asked twice and was answered.' },
  ]);
  harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    dailyTokenBudgets: { agents: { [agentId]: 1_000 } },
  });
  const { agent, client } = harness;
  const id = `conv-${randomUUID()}`;
  await ask(agent, id, 'First question.', { options: { agentId } });
  await ask(agent, id, 'Second question.');
  expect(await client.workflow.getHandle(id).executeUpdate(compactUpdate)).toMatchObject({ compacted: true });
  expect(model.script.requests).toHaveLength(3);
  expect((await agent.status(id)).budget?.used.tokens).toBe(3 * TOKENS_PER_CALL);
  expect((await agent.agentSpentToday(agentId)).tokens).toBe(3 * TOKENS_PER_CALL);
}, 60_000);
