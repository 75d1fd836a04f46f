import { randomUUID } from 'node:crypto';
import type { ConversationOverview } from '../../src/client/conversation-overview';
import {
  type ConversationSpent,
  ConversationSpentSchema,
  SPENT_MEMO,
} from '../../src/shared/conversation-spent';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool]);
const RUNS = 4;
// The scripted endpoint reports 10 prompt and 5 completion tokens a call; each run makes two calls.
const TOKENS_A_CALL = 15;
const TOKENS_A_RUN = 2 * TOKENS_A_CALL;

/** The conversation as visibility lists it, once `done` holds of it (visibility catches up after the fact). */
async function listed(
  id: string,
  done: (overview: ConversationOverview) => boolean,
): Promise<ConversationOverview> {
  return waitFor(async () => {
    const [found] = await harness().agent.overview({ idPrefixes: [id] });
    return found && done(found) ? found : undefined;
  }, `the listing of ${id}`);
}

test('the list shows what a conversation spent as each run finishes, across continue-as-new and after it ended', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  nockModel(
    Array.from({ length: RUNS }, (_, run) => [
      { toolCalls: [{ id: `call_spent_${run}`, name: 'echo', arguments: { text: `run ${run + 1}` } }] },
      { text: `Run ${run + 1} done.` },
    ]).flat(),
  );
  const { runId: firstExecution } = await harness()
    .agent.start(id, { maxHistoryEvents: 50 })
    .then(() => handle.describe());

  await harness().agent.send(id, 'message 1');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  expect((await listed(id, (overview) => overview.spent?.runs === 1)).spent).toEqual({
    runs: 1,
    tokens: TOKENS_A_RUN,
    toolCalls: 1,
  });

  for (let run = 2; run <= RUNS; run++) {
    await harness().agent.send(id, `message ${run}`);
    await waitForEvent(handle, 'run_finished', (event) => event.run === run);
  }
  // Each execution the conversation continued as started with the memo, spent up to the hand-over
  // (between runs, or between two turns of a run: then the run in progress is counted).
  const handedOver = await spentAtStartOfContinuedExecutions(id, firstExecution);
  expect(handedOver.length).toBeGreaterThan(0);
  for (const spent of handedOver) {
    const modelCalls = spent.tokens / TOKENS_A_CALL;
    expect(modelCalls).toBe(Math.round(modelCalls));
    expect(spent.runs).toBeGreaterThan(0);
    // Each run: model call, echo, model call.
    expect(modelCalls).toBeGreaterThanOrEqual(2 * spent.runs - 1);
    expect(spent.toolCalls).toBe(Math.min(spent.runs, modelCalls - spent.runs + 1));
  }
  expect((await listed(id, (overview) => overview.spent?.runs === RUNS)).spent).toEqual({
    runs: RUNS,
    tokens: RUNS * TOKENS_A_RUN,
    toolCalls: RUNS,
  });

  await harness().agent.end(id);
  const ended = await listed(id, (overview) => overview.status === 'ended');
  expect(ended.spent).toEqual({ runs: RUNS, tokens: RUNS * TOKENS_A_RUN, toolCalls: RUNS });
});

/** What the memo said when each execution after the first started: what continue-as-new handed it. */
async function spentAtStartOfContinuedExecutions(
  id: string,
  firstExecution: string,
): Promise<ConversationSpent[]> {
  const { client } = harness();
  const { runId: current } = await client.workflow.getHandle(id).describe();
  const executions = await waitFor(async () => {
    const runIds: string[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      runIds.push(execution.runId);
    }
    return runIds.includes(current) ? runIds : undefined;
  }, `visibility to list the executions of ${id}`);
  const converter = client.options.loadedDataConverter;
  const spent: ConversationSpent[] = [];
  for (const runId of executions.filter((runId) => runId !== firstExecution)) {
    const history = await client.workflow.getHandle(id, runId).fetchHistory();
    const memo = history.events?.[0]?.workflowExecutionStartedEventAttributes?.memo?.fields ?? {};
    const [payload] = await converter.payloadCodecs.reduceRight(
      async (payloads, codec) => codec.decode(await payloads),
      Promise.resolve([memo[SPENT_MEMO]!]),
    );
    spent.push(ConversationSpentSchema.parse(converter.payloadConverter.fromPayload(payload!)));
  }
  return spent;
}
