import { randomUUID } from 'node:crypto';
import { compactUpdate, stateQuery } from '../../src/shared/conversation-api';
import { AgentModel, toolCallsPaired } from '../support/agent-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { bulkTool } from '../support/test-tools';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([bulkTool]);

async function say(id: string, text: string, run: number, options?: object) {
  await harness().agent.send(id, text, { options });
  await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished', (event) => event.run === run);
}

test('past the token budget the oldest turns become a summary; the model never sees a tool result without its call', async () => {
  const model = new AgentModel(4_000); // ~1,000 tokens a turn
  nockModel(model.steps(40));
  const id = `conv-${randomUUID()}`;
  const options = { compaction: { maxTokens: 3_000, keepTokens: 1_500 } };
  for (let turn = 1; turn <= 6; turn++) await say(id, `message ${turn}`, turn, options);

  const handle = harness().client.workflow.getHandle(id);
  const compacted = await waitForEvent(handle, 'compacted');
  expect(compacted.tokensAfter).toBeLessThan(compacted.tokensBefore);
  expect(model.summaryRequests.length).toBeGreaterThan(0);
  expect(model.summaryRequests[0]!.messages[1]!.content).toMatch(
    /^USER: message 1\n\nASSISTANT: {2}\[called bulk/,
  );
  // Every user message was answered, in order, and the model's view always pairs calls with results.
  expect(model.answered).toEqual(Array.from({ length: 6 }, (_, index) => `message ${index + 1}`));
  for (const request of model.requests) expect(toolCallsPaired(request)).toBe(true);
  const afterSummary = model.requests.at(-1)!;
  // After the default system prompt, the summary stands where the oldest turns were.
  expect(afterSummary.messages[0]).toMatchObject({ role: 'system' });
  expect(afterSummary.messages[1]).toMatchObject({
    role: 'user',
    content: expect.stringMatching(
      /^\[Summary of the earlier conversation, which was compacted\]\nsummary \d+$/,
    ),
  });
  const state = await handle.query(stateQuery);
  expect(state.transcript[0]).toMatchObject({ role: 'user', content: expect.stringContaining('summary') });
  expect(state.transcript.at(-1)).toMatchObject({ role: 'assistant' });
});

test('the compact update summarises now, and reports when there is nothing to summarise', async () => {
  const model = new AgentModel(100);
  nockModel(model.steps(10));
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  await say(id, 'only turn', 1);
  expect(await handle.executeUpdate(compactUpdate)).toMatchObject({ compacted: false, removedMessages: 0 });

  await say(id, 'second turn', 2);
  const spentBefore = (await harness().agent.status(id)).budget!.used.tokens;
  const receipt = await handle.executeUpdate(compactUpdate);
  expect(receipt).toMatchObject({ compacted: true, removedMessages: 4 });
  // The summary's tokens (15, as the endpoint reports them) count in the conversation's budget.
  expect((await harness().agent.status(id)).budget!.used.tokens).toBe(spentBefore + 15);
  const state = await handle.query(stateQuery);
  expect(state.transcript.map((message) => message.role)).toEqual([
    'user',
    'user',
    'assistant',
    'toolResult',
    'assistant',
  ]);
  expect(state.transcript[1]).toMatchObject({ content: 'second turn' });
});
