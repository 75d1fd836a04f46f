import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * A webhook receiver drops deliveries whose id it has seen, as the docs tell it to. So ids must
 * never repeat: not across retries of one event (those keep theirs), and not when a conversation id
 * is started again after it ended, when its events count from 1 again.
 */
jest.setTimeout(120_000);

const deliveries: Array<{ id: string; type: string; run: unknown }> = [];
const receiver = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    const delivery = JSON.parse(body) as { id: string; type: string; data: { run?: unknown } };
    deliveries.push({ id: delivery.id, type: delivery.type, run: delivery.data.run });
    response.writeHead(204).end();
  });
});
let harness: TestHarness;

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    webhooks: [
      {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
        events: ['run_finished', 'conversation_ended'],
        secret: 'a-webhook-secret-of-some-length',
      },
    ],
  });
});

afterAll(async () => {
  await harness?.close();
  nock.cleanAll();
  nock.enableNetConnect();
  await new Promise((resolve) => receiver.close(resolve));
});

test('a conversation id started again after it ended gets delivery ids of its own', async () => {
  const id = `conv-again-${randomUUID().slice(0, 8)}`;
  nockModel([{ text: 'first life' }, { text: 'second life' }]);
  for (const life of [1, 2]) {
    // Started as any Temporal client may: the id is free again once the first one ended.
    const handle = await harness.client.workflow.start('conversation', {
      workflowId: id,
      taskQueue: harness.taskQueue,
      args: [
        {
          initialMessage: { text: `life ${life}`, messageId: `m${life}` },
          options: { endAfterFirstRun: true },
        },
      ],
    });
    await handle.result();
    await waitFor(
      async () =>
        deliveries.filter((delivery) => delivery.type === 'conversation_ended').length >= life
          ? true
          : undefined,
      `the end of life ${life} delivered`,
    );
  }
  const ids = deliveries.map((delivery) => delivery.id);
  // Deliveries run side by side and may arrive in any order.
  expect(deliveries.map((delivery) => delivery.type).sort()).toEqual([
    'conversation_ended',
    'conversation_ended',
    'run_finished',
    'run_finished',
  ]);
  // The same event number in each life, and still two ids.
  expect(new Set(ids).size).toBe(ids.length);
  for (const delivered of ids) expect(delivered.startsWith(`${id}/`)).toBe(true);
});
