import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { AdmissionRequest } from '../../src/shared/worker-floors';
import { AgentClient } from '../../src/client/agent-client';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../../src/shared/workflow-task-bounds';

// The worker's admission is a local activity in the conversation's first workflow task. One that
// runs longer than most of the task timeout makes the worker complete the task to keep it alive,
// before any verdict: a client must not read that completion as the conversation admitted.
test('a refusal that takes longer than a workflow task is reported as a refusal', async () => {
  const address = process.env.TEST_TEMPORAL_ADDRESS!;
  const connection = await NativeConnection.connect({ address });
  const client = new Client({ connection: await Connection.connect({ address }) });
  const taskQueue = `slow-admission-${randomUUID()}`;
  let asked = 0;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    activities: {
      async admitConversation(_request: AdmissionRequest) {
        asked++;
        await sleep(WORKFLOW_TASK_TIMEOUT_MS + 1_000);
        return { admitted: false, reason: 'refused after a long look' };
      },
    },
  });
  try {
    const id = `conv-${randomUUID()}`;
    const admission = await worker.runUntil(async () => {
      await client.workflow.start('conversation', {
        workflowId: id,
        taskQueue,
        args: [{}],
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      });
      return new AgentClient(client, taskQueue).admission(id, 20_000);
    });
    expect(asked).toBe(1);
    expect(admission).toEqual({
      admitted: false,
      reason: expect.stringContaining('refused after a long look'),
    });
  } finally {
    await connection.close();
    await client.connection.close();
  }
});
