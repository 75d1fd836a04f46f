import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { userMessageSignal } from '../../src/shared/conversation-api';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';
import type { conversation } from '../../src/workflows/conversation';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { moduleGraphProbe } from '../support/module-graph-probe';
import { echoTool } from '../support/test-tools';
import { waitForEvent } from '../support/wait-for-event';

// The workflow bundle preloads its modules (src/workflows/shared-module-graph.ts): every conversation a
// worker thread has cached validates with one shared, frozen copy of zod and of every schema. These
// conversations share one worker.
const harness = useNockedHarness([echoTool]);

test('conversations sharing one zod each validate their own input, and refusals leave the others working', async () => {
  nockModel([{ text: 'First answer.' }, { text: 'Second answer.' }]);
  const first = `conv-${randomUUID()}`;
  expect((await ask(harness().agent, first, 'Hello')).finished).toMatchObject({ answer: 'First answer.' });

  const refused = await harness().client.workflow.start<typeof conversation>('conversation', {
    workflowId: `conv-${randomUUID()}`,
    taskQueue: harness().taskQueue,
    args: [{ options: { maxToolIterations: 0 } }],
  });
  const failure = await refused.result().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause?.message).toMatch(
    /^invalid conversation options: [\s\S]*maxToolIterations[\s\S]*>=1/,
  );

  const handle = harness().client.workflow.getHandle(first);
  await handle.signal(userMessageSignal, { text: '', messageId: 'm-empty' });
  expect(await waitForEvent(handle, 'error')).toMatchObject({
    message: expect.stringMatching(/^userMessage ignored: [\s\S]*message text is empty/),
  });
  expect((await ask(harness().agent, first, 'Still there?')).finished).toMatchObject({
    answer: 'Second answer.',
  });
});

test('the workflow bundle preloads its whole module graph, then settles it, before any workflow runs', async () => {
  const bundle = await readFile(process.env.TEST_WORKFLOW_BUNDLE!, 'utf8');
  const preload =
    /exports\.preloadModules = function preloadModules\(\) \{([\s\S]*?)\n\}/.exec(bundle)?.[1] ?? '';
  const preloaded = [...preload.matchAll(/"([^"]+)"\)/g)].map((match) => match[1]);
  expect(preloaded).toEqual([
    expect.stringMatching(/\/workflows\/index\.[jt]s$/),
    expect.stringMatching(/\/workflows\/settle-shared-modules\.[jt]s$/),
  ]);
});

test('every schema the shared modules export is frozen and still works in each workflow of the thread', async () => {
  const code = await bundleAgentWorkflows({
    workflowsPath: require.resolve('../support/module-graph-probe'),
  });
  const connection = await NativeConnection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  const client = new Client({
    connection: await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! }),
  });
  const taskQueue = `module-graph-${randomUUID()}`;
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: { code } });
  try {
    const probes = await worker.runUntil(async () => {
      const first = await client.workflow.execute<typeof moduleGraphProbe>('moduleGraphProbe', {
        workflowId: `probe-${randomUUID()}`,
        taskQueue,
        // A use the freeze refuses outside the probe's own catch fails the task; fail the test instead.
        workflowExecutionTimeout: '60s',
      });
      const second = await client.workflow.execute<typeof moduleGraphProbe>('moduleGraphProbe', {
        workflowId: `probe-${randomUUID()}`,
        taskQueue,
        // A use the freeze refuses outside the probe's own catch fails the task; fail the test instead.
        workflowExecutionTimeout: '60s',
      });
      return [first, second];
    });
    for (const probe of probes) {
      // The conversation's options, messages, tool descriptors, approvals and more: well over a hundred.
      expect(probe.schemas).toBeGreaterThan(100);
      expect(probe.frozen).toBe(probe.schemas);
      expect(probe.refusals).toEqual([]);
      // A pattern still decides after the freeze: zod tests it through the stand-in the freeze skips.
      expect(probe.agentIds).toEqual({ valid: true, path: false });
    }
  } finally {
    await connection.close();
    await client.connection.close();
  }
});
