import { randomUUID } from 'node:crypto';
import { statusQuery, userMessageSignal } from '../../src/shared/conversation-api';
import { AgentModel, toolCallsPaired } from './agent-model';
import { nockModel } from './nock-model';
import type { TestHarness } from './test-worker';
import { waitFor } from './test-worker';

/** How long a conversation `runLongConversation` holds, and what it must have gone through. */
export interface LongConversationShape {
  turns: number;
  /** The conversation's `maxHistoryEvents`: a run hands over at the first idle point past it. */
  maxHistoryEvents: number;
  /** Runs (continue-as-new) the conversation must have had at least. */
  minRuns: number;
  /** Compactions (summary requests) it must have had at least. */
  minSummaries: number;
}

/**
 * A conversation of `turns` messages, each answered with a 4 KB tool output then text, one message
 * after the other's run, with compaction and continue-as-new along the way. Checks that every message
 * was answered once and in order, that the model always saw calls paired with their results, that
 * it compacted and continued as new as often as asked, and that no run's history outgrew its bound.
 * For `bulkTool`'s worker (test/support/test-tools).
 */
export async function runLongConversation(harness: TestHarness, shape: LongConversationShape): Promise<void> {
  const { turns, maxHistoryEvents } = shape;
  const model = new AgentModel(4_000);
  nockModel(model.steps(turns * 3 + 1_000));
  const id = `conv-long-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'turn 1', {
    options: { maxHistoryEvents, compaction: { maxTokens: 20_000, keepTokens: 8_000 } },
  });
  for (let turn = 1; turn <= turns; turn++) {
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
  expect(model.answered).toEqual(Array.from({ length: turns }, (_, index) => `turn ${index + 1}`));
  expect(model.requests.every(toolCallsPaired)).toBe(true);
  expect(model.summaryRequests.length).toBeGreaterThanOrEqual(shape.minSummaries);

  // Several runs, each with a bounded history: a run hands over at the first idle point past the limit.
  const runIds: string[] = [];
  for await (const execution of harness.client.workflow.list({ query: `WorkflowId = '${id}'` }))
    runIds.push(execution.runId);
  expect(runIds.length).toBeGreaterThanOrEqual(shape.minRuns);
  for (const runId of runIds) {
    const history = await harness.client.workflow.getHandle(id, runId).fetchHistory();
    expect(history.events!.length).toBeLessThan(maxHistoryEvents + 100);
  }
}
