import type { ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

/**
 * A webhook delivery is an activity: a worker SIGKILLed after the event and before the receiver
 * answered does not lose it; the next worker delivers it, with the same delivery id and a valid
 * signature.
 */
const SECRET = `whsec-${randomUUID()}`;
let model: ScriptedModelServer | undefined;
let connection: Connection;
let directory: string;
let receiver: http.Server;
const children: ChildProcess[] = [];
const arrivals: Array<{ id: string; type: string; signed: boolean }> = [];
/** While true, the receiver takes a delivery but never answers it. */
let holding = true;

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-webhook-crash-'));
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const [, timestamp, signature] =
        /^t=(\d+),v1=([0-9a-f]+)$/.exec(String(request.headers['durable-agent-signature'])) ?? [];
      const expected = createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex');
      const delivery = JSON.parse(body) as { id: string; type: string };
      arrivals.push({ id: delivery.id, type: delivery.type, signed: signature === expected });
      if (!holding) response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const child of children) await killWorkerProcess(child);
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await model?.close();
  await connection.close();
  await rm(directory, { recursive: true, force: true });
});

test('a delivery cut off by a worker SIGKILL is made by the next worker', async () => {
  model = await startScriptedModelServer([{ text: 'Done, and the hook will hear of it.' }]);
  const webhooksFile = path.join(directory, 'webhooks.json');
  await writeFile(
    webhooksFile,
    JSON.stringify({
      webhooks: [
        {
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
          events: ['run_finished'],
          secret: SECRET,
        },
      ],
    }),
  );
  const env = {
    TASK_QUEUE: `webhook-crash-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: directory,
    MARKER_DIR: directory,
    DURABLE_AGENT_WEBHOOKS: webhooksFile,
  };
  const first = await spawnWorkerProcess(env);
  children.push(first);
  const agent = new AgentClient(new Client({ connection }), env.TASK_QUEUE);
  const id = `conv-${randomUUID()}`;
  await agent.send(id, 'finish a run');
  await waitFor(async () => (arrivals.length > 0 ? true : undefined), 'the first delivery attempt to arrive');

  await killWorkerProcess(first);
  holding = false;
  children.push(await spawnWorkerProcess(env));

  await waitFor(
    async () => (arrivals.length >= 2 ? true : undefined),
    'the delivery to be made again',
    60_000,
  );
  const [cutOff, delivered] = arrivals;
  expect(cutOff).toMatchObject({ type: 'run_finished', signed: true });
  expect(delivered).toEqual(cutOff);
  expect(delivered!.id.startsWith(`${id}/`)).toBe(true);
});
