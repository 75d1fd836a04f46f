import { randomUUID } from 'node:crypto';
import { statusQuery, userMessageSignal } from '../../src/shared/conversation-api';
import { AgentModel, toolCallsPaired } from '../support/agent-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { bulkTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';

const harness = useNockedHarness([bulkTool]);
const TURNS = 2_000;
const MAX_HISTORY_EVENTS = 2_000;

test(
  `a ${TURNS}-turn conversation with 4 KB tool outputs completes across continue-as-new runs, nothing lost`,
  async () => {
    const model = new AgentModel(4_000);
    nockModel(model.steps(TURNS * 3 + 1_000));
    const id = `conv-long-${randomUUID()}`;
    const handle = harness().client.workflow.getHandle(id);
    await harness().agent.send(id, 'turn 1', {
      options: { maxHistoryEvents: MAX_HISTORY_EVENTS, compaction: { maxTokens: 20_000, keepTokens: 8_000 } },
    });
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn > 1) await handle.signal(userMessageSignal, { text: `turn ${turn}`, messageId: `m-${turn}` });
      await waitFor(
        async () => {
          const status = await handle.query(statusQuery);
          return status.runCount === turn && status.status === 'idle' ? true : undefined;
        },
        `turn ${turn}`,
        60_000,
        5,
      );
    }

    // Every message was answered, once and in order, and the model always saw calls paired with results.
    expect(model.answered).toEqual(Array.from({ length: TURNS }, (_, index) => `turn ${index + 1}`));
    expect(model.requests.every(toolCallsPaired)).toBe(true);
    expect(model.summaryRequests.length).toBeGreaterThan(10);

    // Several runs, each with a bounded history: a run hands over at the first idle point past the limit.
    const runIds: string[] = [];
    for await (const execution of harness().client.workflow.list({ query: `WorkflowId = '${id}'` }))
      runIds.push(execution.runId);
    expect(runIds.length).toBeGreaterThan(5);
    for (const runId of runIds) {
      const history = await harness().client.workflow.getHandle(id, runId).fetchHistory();
      expect(history.events!.length).toBeLessThan(MAX_HISTORY_EVENTS + 100);
    }
  },
  45 * 60_000,
);
