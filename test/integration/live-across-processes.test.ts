import { randomUUID } from 'node:crypto';
import { LocalCancelRequests } from '../../src/activities/local-cancel-requests';
import { LiveModelText } from '../../src/client/live-model-text';
import type { AgentEvent } from '../../src/shared/events';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const COUNT_SLOWLY = 'for i in $(seq 1 300); do echo line $i; sleep 0.1; done';

// A watcher in another process than the worker (the worker hands its text to a private LiveModelText,
// so nothing reaches this process's watchers that way) reads a model call's text from the worker's
// push endpoint as it streams; heartbeats, at most every 2.4 s here, would bring it only after the call.

const PIECES = 6;
let model: ScriptedModelServer;

beforeAll(async () => {
  model = await startScriptedModelServer(
    Array.from({ length: 3 }, () => ({
      text: 'one two three four five six',
      textChunks: PIECES,
      chunkDelayMs: 250,
    })),
  );
});

afterAll(() => model?.close());

/** The model_text pieces a watcher saw before the call's model_response. */
async function piecesBeforeResponse(harness: TestHarness): Promise<string[]> {
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'Count', { options: { workspace: harness.workspace } });
  const pieces: string[] = [];
  const events = harness.agent.followRun(sent);
  for (let next = await events.next(); !next.done; next = await events.next()) {
    const event: AgentEvent = next.value;
    if (event.type === 'model_response') break;
    if (event.type === 'model_text') pieces.push(event.text);
  }
  await events.return(undefined as never);
  return pieces;
}

test.each([
  ['plain HTTP', true],
  ['TLS, the certificate pinned through the heartbeat', 'self-signed'],
] as const)(
  "with the worker's push endpoint (%s), the text arrives piece by piece while the model streams it",
  async (_, liveEndpoint) => {
    const harness = await startHarness({
      modelBaseUrl: model.baseUrl,
      liveText: new LiveModelText(),
      liveEndpoint,
      heartbeatThrottleMs: 60_000,
    });
    try {
      const pieces = await piecesBeforeResponse(harness);
      expect(pieces.length).toBeGreaterThanOrEqual(3);
      expect(pieces.join('')).toBe('one two three four five six');
    } finally {
      await harness.close();
    }
  },
);

test('without it, the same watcher gets no text before the answer: heartbeats are the only way', async () => {
  const harness = await startHarness({
    modelBaseUrl: model.baseUrl,
    liveText: new LiveModelText(),
    heartbeatThrottleMs: 60_000,
  });
  try {
    expect(await piecesBeforeResponse(harness)).toEqual([]);
  } finally {
    await harness.close();
  }
});

/** Records the runs its worker is told about (through the push endpoint), then does as usual. */
class HeardCancels extends LocalCancelRequests {
  readonly heard: string[] = [];
  override requested(runId: string): void {
    this.heard.push(runId);
    super.requested(runId);
  }
}

test("a steer reaches a tool on another worker through that worker's push endpoint, over TLS pinned by its identity", async () => {
  const taskQueue = `live-${randomUUID()}`;
  const steerModel = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_count', name: 'exec', arguments: { command: COUNT_SLOWLY } }] },
    { text: 'Stopped counting.' },
  ]);
  const toolCancels = new HeardCancels();
  // The conversation runs on one worker, its tools on another: heartbeats at most every 2.4 s.
  const workflows = await startHarness({
    modelBaseUrl: steerModel.baseUrl,
    taskQueue,
    serves: 'workflows',
    liveEndpoint: true,
  });
  const tools = await startHarness({
    modelBaseUrl: steerModel.baseUrl,
    taskQueue,
    serves: 'activities',
    liveEndpoint: 'self-signed',
    cancelRequests: toolCancels,
    heartbeatThrottleMs: 60_000,
  });
  try {
    const id = `conv-${randomUUID()}`;
    const options = { workspace: workflows.workspace, approval: { mode: 'auto' as const } };
    await workflows.agent.send(id, 'Count slowly', { options });
    const handle = workflows.client.workflow.getHandle(id);
    await waitForEvent(handle, 'tool_execution_start');
    const { runId } = await handle.describe();
    await workflows.agent.steer(id, 'Stop, that is enough');
    await waitForEvent(handle, 'tool_execution_end', (event) => event.aborted === true);
    // Only a knock makes a worker that runs no workflows hear of a cancel request.
    expect(toolCancels.heard).toContain(runId);
    await waitForEvent(handle, 'run_finished');
  } finally {
    await workflows.close();
    await tools.close();
    await steerModel.close();
  }
});
