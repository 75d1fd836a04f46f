import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
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

/** Real servers on 127.0.0.1: s3rver for S3, the distribution's PostgreSQL (PGlite where it is missing). */
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
  expect(() =>
    blobStoreFromEnv({
      DURABLE_AGENT_BLOB_STORE: 's3',
      DURABLE_AGENT_BLOB_S3_BUCKET: BUCKET,
      DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE: 'yes',
    }),
  ).toThrow(/DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE must be true or false/);
  expect(() =>
    blobStoreFromEnv({ ...postgresEnv(), DURABLE_AGENT_BLOB_POSTGRES_TABLE: 'blobs; drop table x' }),
  ).toThrow(/DURABLE_AGENT_BLOB_POSTGRES_TABLE must be a plain lower-case SQL name/);
  expect(
    () =>
      new PostgresBlobStore({ connectionString: 'postgres://x@127.0.0.1/x', table: 'blobs; drop table x' }),
  ).toThrow(/plain lower-case SQL name/);
});

test('the postgres store reads without creating its table, and creates it on the first write', async () => {
  const table = `blobs_${randomUUID().replaceAll('-', '_')}`;
  const store = blobStoreFromEnv({ ...postgresEnv(), DURABLE_AGENT_BLOB_POSTGRES_TABLE: table });
  const bytes = randomBytes(1000);
  await expect(store.get(createHash('sha256').update(bytes).digest('hex'))).rejects.toThrow(
    `is not in table ${table}`,
  );
  expect(await tableExists(table)).toBe(false);
  const key = await store.put(bytes);
  expect(await tableExists(table)).toBe(true);
  expect(Buffer.from(await store.get(key)).equals(bytes)).toBe(true);
  await closeStore(store);
});

test.each([
  ['s3', s3Env],
  ['postgres', postgresEnv],
])(
  'the %s store loads its client library on first use, and a short process using it exits by itself',
  async (_kind, env) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, '../support/store-one-blob.ts')],
      {
        env: {
          ...process.env,
          ...env(),
          AWS_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
      },
    );
    expect(JSON.parse(stdout)).toEqual({ loadedBeforeUse: false, loadedAfterUse: true, readBack: true });
  },
);

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

async function tableExists(table: string): Promise<boolean> {
  const pool = new Pool({ connectionString: postgres.url, max: 1 });
  try {
    const result = await pool.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [
      table,
    ]);
    return result.rows[0]?.found != null;
  } finally {
    await pool.end();
  }
}

async function closeStore(store: BlobStore): Promise<void> {
  if (store instanceof PostgresBlobStore || store instanceof S3BlobStore) await store.close();
}
