import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import nock from 'nock';
import { CONVERSATION_WORKFLOW_TYPE } from '../../src/shared/constants';
import { DEFAULT_MAX_HISTORY_EVENTS, WORKFLOW_TASK_TIMEOUT_MS } from '../../src/shared/workflow-task-bounds';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool]);

/** A turn that calls `echo` `calls` times at once, then answers. */
const fanOutTurn = (calls: number, answer: string) => [
  {
    toolCalls: Array.from({ length: calls }, (_, index) => ({
      name: 'echo',
      arguments: { text: `e${index}` },
    })),
  },
  { text: answer },
];

async function taskTimeoutMs(handle: WorkflowHandle, runId?: string): Promise<number> {
  const target = runId ? harness().client.workflow.getHandle(handle.workflowId, runId) : handle;
  const timeout = (await target.describe()).raw.executionConfig?.defaultWorkflowTaskTimeout;
  return Number(timeout?.seconds ?? 0) * 1_000 + Math.round((timeout?.nanos ?? 0) / 1e6);
}

async function continuedRun(handle: WorkflowHandle, firstRunId: string): Promise<string> {
  return waitFor(async () => {
    const { runId } = await handle.describe();
    return runId !== firstRunId ? runId : undefined;
  }, `${handle.workflowId} to continue as new`);
}

test('a worker killed in the middle of a workflow task holds a conversation up for the short task timeout: as the agent client starts it, and from the first continued run of one a plain client started', async () => {
  expect(WORKFLOW_TASK_TIMEOUT_MS).toBeLessThan(10_000);
  const sent = `conv-${randomUUID()}`;
  nockModel([{ text: 'hello' }]);
  await harness().agent.send(sent, 'hi');
  const sentHandle = harness().client.workflow.getHandle(sent);
  await waitForEvent(sentHandle, 'run_finished', (event) => event.run === 1);
  expect(await taskTimeoutMs(sentHandle)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
  // The first script's spare reply would answer the next conversation's first request.
  nock.cleanAll();

  // Started as any Temporal client would, with Temporal's default of 10 s.
  const plain = `conv-${randomUUID()}`;
  const handle = await harness().client.workflow.start(CONVERSATION_WORKFLOW_TYPE, {
    workflowId: plain,
    taskQueue: harness().taskQueue,
    args: [{ options: { maxHistoryEvents: 50, approval: { mode: 'auto' } } }],
  });
  const firstRunId = handle.firstExecutionRunId;
  expect(await taskTimeoutMs(handle, firstRunId)).toBe(10_000);
  nockModel(fanOutTurn(20, 'echoed'));
  await harness().agent.send(plain, 'echo twenty times');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  const next = await continuedRun(handle, firstRunId);
  expect(await taskTimeoutMs(handle, next)).toBe(WORKFLOW_TASK_TIMEOUT_MS);
});

test('a conversation whose options set no history bound continues as new once its run has the default number of events, so an uncached replay stays well inside the task timeout', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  // Each tool call adds at least three events (scheduled, started, completed).
  const calls = Math.ceil(DEFAULT_MAX_HISTORY_EVENTS / 3) + 10;
  nockModel([...fanOutTurn(calls, 'all echoed'), { text: 'second answer' }]);
  await harness().agent.send(id, 'echo many times', { options: { approval: { mode: 'auto' } } });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId ?? '';
  const next = await continuedRun(handle, firstRunId);
  const first = await harness().client.workflow.getHandle(id, firstRunId).describe();
  expect(first.historyLength).toBeGreaterThanOrEqual(DEFAULT_MAX_HISTORY_EVENTS);

  // The continued run answers as before, on a short history.
  await harness().agent.send(id, 'and again');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 2);
  const continued = await harness().client.workflow.getHandle(id, next).describe();
  expect(continued.historyLength).toBeLessThan(200);
});
