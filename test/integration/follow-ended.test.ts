import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import nock from 'nock';
import { AgentClient } from '../../src/client/agent-client';
import { agentDataConverter } from '../../src/worker/data-converter';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { startHarness } from '../support/test-worker';

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
});
afterAll(() => nock.enableNetConnect());

// A chaos run lost a conversation this way: the watch gave up with "Failed to query Workflow
// (DEADLINE_EXCEEDED)" on a conversation that had ended after its first run while workers were killed.
test('following the run of a conversation that ended after it, with no worker left to answer for it, still reports the answer', async () => {
  const harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL });
  nockModel([{ text: 'Done before the worker went.' }]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness.agent.send(id, 'Answer, then end', { options: { endAfterFirstRun: true } });
  await harness.client.workflow.getHandle(id).result();
  await harness.close();

  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const client = new Client({ connection, namespace: 'default', dataConverter: agentDataConverter() });
    const agent = new AgentClient(client, harness.taskQueue);
    const follow = agent.followRun(sent);
    let next = await follow.next();
    while (!next.done) next = await follow.next();
    expect(next.value).toMatchObject({
      how: 'finished',
      from: 'result',
      event: { type: 'run_finished', run: 1, outcome: 'answered', answer: 'Done before the worker went.' },
    });
  } finally {
    await connection.close();
  }
}, 120_000);
