import { randomUUID } from 'node:crypto';
import net from 'node:net';
import nock from 'nock';
import { agentDataConverter } from '../../src/worker/data-converter';
import { S3_TEST_CREDENTIALS, startS3Server } from '../support/blob-servers';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { noiseTool } from '../support/test-tools';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const BUCKET = 'durable-agent-outage';
let s3: Awaited<ReturnType<typeof startS3Server>>;
let harness: TestHarness;

/** A TCP door in front of the S3 server: closed, every connection is cut at once. */
let open = true;
let door: net.Server;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  s3 = await startS3Server(BUCKET);
  const target = new URL(s3.endpoint);
  door = net.createServer((socket) => {
    if (!open) return socket.destroy();
    const upstream = net.connect(Number(target.port), target.hostname);
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => door.listen(0, '127.0.0.1', resolve));
  const port = (door.address() as net.AddressInfo).port;
  process.env.AWS_ACCESS_KEY_ID = S3_TEST_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3_TEST_CREDENTIALS.secretAccessKey;
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    tools: [noiseTool, { ...noiseTool, name: 'noise_once', idempotent: false }],
    dataConverter: agentDataConverter({
      ...process.env,
      DURABLE_AGENT_BLOB_STORE: 's3',
      DURABLE_AGENT_BLOB_S3_BUCKET: BUCKET,
      DURABLE_AGENT_BLOB_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE: 'true',
      DURABLE_AGENT_OFFLOAD_ABOVE_BYTES: String(16 * 1024),
    }),
  });
});

afterEach(() => nock.cleanAll());

afterAll(async () => {
  await harness?.close();
  door?.close();
  await s3?.close();
  nock.cleanAll();
  nock.enableNetConnect();
});

test('while the blob store is unreachable a large tool result waits for it; once it is back the conversation goes on with the whole result', async () => {
  open = false;
  const script = nockModel([
    { toolCalls: [{ id: 'call_noise', name: 'noise', arguments: { bytes: 60_000 } }] },
    { text: 'Received.' },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Give me everything');
  const handle = harness.client.workflow.getHandle(id);
  // The tool ran, but its result could not be stored: the attempt failed and is tried again.
  const failure = await waitFor(async () => {
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    return pending.find((activity) => activity.lastFailure)?.lastFailure?.message ?? undefined;
  }, 'a failed attempt of the tool');
  expect(failure).toMatch(/^the blob store could not take a payload of \d+ bytes \(compressed\): /);
  open = true;
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({
    outcome: 'answered',
    answer: 'Received.',
  });
  const result = script.requests[1]!.messages.find((message) => message.role === 'tool')?.content;
  expect(typeof result === 'string' ? result.length : 0).toBeGreaterThanOrEqual(60_000);
});

test('a tool with side effects is not run again for it: the model reads that its result could not be stored', async () => {
  open = false;
  const script = nockModel([
    { toolCalls: [{ id: 'call_once', name: 'noise_once', arguments: { bytes: 60_000 } }] },
    { text: 'Noted.' },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Give me everything once');
  const handle = harness.client.workflow.getHandle(id);
  try {
    expect(await waitForEvent(handle, 'run_finished')).toMatchObject({
      outcome: 'answered',
      answer: 'Noted.',
    });
  } finally {
    open = true;
  }
  const result = script.requests[1]!.messages.find((message) => message.role === 'tool')?.content;
  expect(JSON.parse(String(result))).toEqual({
    status: 'error',
    tool: 'noise_once',
    error: expect.stringMatching(
      /^the blob store could not take a payload of \d+ bytes \(compressed\): .*; the tool did run, so whatever it did has taken effect, but what it returned is lost$/,
    ),
  });
});
