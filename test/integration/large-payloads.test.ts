import { randomUUID } from 'node:crypto';
import { stateQuery } from '../../src/shared/conversation-api';
import { MAX_TOOL_RESULT_BYTES } from '../../src/shared/constants';
import { largestPayloadBytes } from '../support/history-size';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { bulkTool, noiseTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([bulkTool, noiseTool]);
/** What the codec lets into history at most (its offload threshold), far below Temporal's 2 MB limit. */
const OFFLOAD_ABOVE_BYTES = 256 * 1024;

test('a tool result of 10 MB completes without any payload error; the model gets the first 64 KB', async () => {
  let seen: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ name: 'bulk', arguments: { bytes: 10_000_000, seed: 'abcdefghij' } }] },
    (request) => {
      seen = request;
      return { text: 'That was a lot.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, 'Give me everything');
  const handle = harness().client.workflow.getHandle(id);
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'answered' });
  const toolMessage = seen!.messages.find((message) => message.role === 'tool')!;
  expect(Buffer.byteLength(toolMessage.content ?? '')).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES);
  expect(toolMessage.content).toMatch(/truncated/i);
  expect(largestPayloadBytes(await handle.fetchHistory())).toBeLessThanOrEqual(OFFLOAD_ABOVE_BYTES);
});

test('a transcript far over the payload limit is carried across continue-as-new by reference', async () => {
  // 40 incompressible 60 KB results: a 2.4 MB transcript, more than Temporal accepts in one payload.
  const calls = Array.from({ length: 40 }, (_, index) => ({
    id: `call_noise_${index}`,
    name: 'noise',
    arguments: { bytes: 60_000 },
  }));
  let later: ChatRequest | undefined;
  nockModel([
    { toolCalls: calls },
    { text: 'Lots of noise.' },
    (request) => {
      later = request;
      return { text: 'Still here.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  // Compaction off: the point is to carry the whole 2.4 MB across.
  await harness().agent.send(id, 'Make noise', { options: { maxHistoryEvents: 50, compaction: false } });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  // The first run is over its event limit: it continues as new with the whole transcript in its input.
  const firstRunId = await waitFor(async () => {
    const started = (await handle.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    return started?.continuedExecutionRunId || undefined;
  }, 'continue-as-new');
  const secondRunId = (await handle.describe()).runId;

  await harness().agent.send(id, 'Are you still there?');
  expect(await waitForEvent(handle, 'run_finished', (event) => event.run === 2)).toMatchObject({
    answer: 'Still here.',
  });
  // The model saw every result from before the hand-over.
  expect(later!.messages.filter((message) => message.role === 'tool')).toHaveLength(40);
  const state = await handle.query(stateQuery);
  expect(state.transcript).toHaveLength(1 + 1 + 40 + 1 + 1 + 1);

  for (const runId of [firstRunId, secondRunId]) {
    const history = await harness().client.workflow.getHandle(id, runId).fetchHistory();
    expect(largestPayloadBytes(history)).toBeLessThanOrEqual(OFFLOAD_ABOVE_BYTES);
  }
});
