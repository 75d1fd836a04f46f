import { randomBytes, randomUUID } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import nock from 'nock';
import { Pool } from 'pg';
import type { BlobStore } from '../../src/worker/blob-store';
import { blobStoreFromEnv } from '../../src/worker/blob-store-from-env';
import { agentDataConverter } from '../../src/worker/data-converter';
import { PostgresBlobStore } from '../../src/worker/postgres-blob-store';
import { S3BlobStore } from '../../src/worker/s3-blob-store';
import { S3_TEST_CREDENTIALS, startPostgresServer, startS3Server } from '../support/blob-servers';
import { largestPayloadBytes } from '../support/history-size';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { noiseTool } from '../support/test-tools';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

/** Real servers on 127.0.0.1: s3rver for S3, PGlite over the Postgres wire protocol for PostgreSQL. */
const BUCKET = 'durable-agent-blobs';
/** Low, so a 60 KB incompressible tool result (and the transcripts carrying it) is offloaded. */
const OFFLOAD_ABOVE_BYTES = 16 * 1024;
let s3: Awaited<ReturnType<typeof startS3Server>>;
let postgres: Awaited<ReturnType<typeof startPostgresServer>>;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  [s3, postgres] = await Promise.all([startS3Server(BUCKET), startPostgresServer()]);
  process.env.AWS_ACCESS_KEY_ID = S3_TEST_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3_TEST_CREDENTIALS.secretAccessKey;
});
afterAll(async () => {
  await Promise.all([s3?.close(), postgres?.close()]);
  nock.cleanAll();
  nock.enableNetConnect();
});

const s3Env = () => ({
  DURABLE_AGENT_BLOB_STORE: 's3',
  DURABLE_AGENT_BLOB_S3_BUCKET: BUCKET,
  DURABLE_AGENT_BLOB_S3_PREFIX: 'blobs/',
  DURABLE_AGENT_BLOB_S3_ENDPOINT: s3.endpoint,
  DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE: 'true',
});
const postgresEnv = () => ({
  DURABLE_AGENT_BLOB_STORE: 'postgres',
  DURABLE_AGENT_BLOB_POSTGRES_URL: postgres.url,
});

describe.each([
  ['s3', () => blobStoreFromEnv(s3Env())],
  ['postgres', () => blobStoreFromEnv(postgresEnv())],
])('the %s blob store', (_kind, makeStore: () => BlobStore) => {
  test('reads back what it stored, by content: the same bytes twice are one blob', async () => {
    const store = makeStore();
    const bytes = randomBytes(300_000);
    const key = await store.put(bytes);
    expect(await store.put(Uint8Array.from(bytes))).toBe(key);
    expect(Buffer.from(await store.get(key)).equals(bytes)).toBe(true);
    await closeStore(store);
  });

  test('a key it does not hold is a clear error; a malformed key is refused before any request', async () => {
    const store = makeStore();
    await expect(store.get('0'.repeat(64))).rejects.toThrow(
      /is not in .*every worker and client must use the same blob store/,
    );
    await expect(store.get('../etc/passwd')).rejects.toThrow(/not a blob key/);
    await closeStore(store);
  });
});

test('configuration errors name the variable', () => {
  expect(() => blobStoreFromEnv({ DURABLE_AGENT_BLOB_STORE: 's3' })).toThrow(
    /DURABLE_AGENT_BLOB_S3_BUCKET must be set/,
  );
  expect(() => blobStoreFromEnv({ DURABLE_AGENT_BLOB_STORE: 'postgres' })).toThrow(
    /DURABLE_AGENT_BLOB_POSTGRES_URL must be set/,
  );
  expect(() => blobStoreFromEnv({ DURABLE_AGENT_BLOB_STORE: 'ftp' })).toThrow(
    /must be directory, s3 or postgres/,
  );
  expect(
    () =>
      new PostgresBlobStore({ connectionString: 'postgres://x@127.0.0.1/x', table: 'blobs; drop table x' }),
  ).toThrow(/plain lower-case SQL name/);
});

describe.each([
  ['s3', s3Env, async () => countS3Objects()],
  ['postgres', postgresEnv, async () => countPostgresRows()],
])('a conversation whose payloads go to the %s store', (_kind, env, blobsStored) => {
  let harness: TestHarness;
  beforeAll(async () => {
    harness = await startHarness({
      modelBaseUrl: NOCK_MODEL_URL,
      tools: [noiseTool],
      dataConverter: agentDataConverter({
        ...process.env,
        ...env(),
        DURABLE_AGENT_OFFLOAD_ABOVE_BYTES: String(OFFLOAD_ABOVE_BYTES),
      }),
    });
  });
  afterAll(() => harness?.close());
  afterEach(() => nock.cleanAll());

  test('payloads over the offload threshold are stored there and history holds only references', async () => {
    const before = await blobsStored();
    nockModel([{ toolCalls: [{ name: 'noise', arguments: { bytes: 60_000 } }] }, { text: 'Received.' }]);
    const id = `conv-${randomUUID()}`;
    await harness.agent.send(id, 'Give me everything');
    const handle = harness.client.workflow.getHandle(id);
    expect(await waitForEvent(handle, 'run_finished')).toMatchObject({
      outcome: 'answered',
      answer: 'Received.',
    });
    expect(largestPayloadBytes(await handle.fetchHistory())).toBeLessThanOrEqual(OFFLOAD_ABOVE_BYTES);
    expect(await blobsStored()).toBeGreaterThan(before);
  });
});

async function countS3Objects(): Promise<number> {
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_TEST_CREDENTIALS,
  });
  const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'blobs/' }));
  client.destroy();
  return listed.KeyCount ?? 0;
}

async function countPostgresRows(): Promise<number> {
  const pool = new Pool({ connectionString: postgres.url, max: 1 });
  try {
    const result = await pool.query<{ count: string }>(
      "SELECT count(*) FROM durable_agent_blobs WHERE to_regclass('durable_agent_blobs') IS NOT NULL",
    );
    return Number(result.rows[0]?.count ?? 0);
  } catch {
    return 0;
  } finally {
    await pool.end();
  }
}

async function closeStore(store: BlobStore): Promise<void> {
  if (store instanceof PostgresBlobStore) await store.close();
  if (store instanceof S3BlobStore) store.close();
}
