import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { clusterFiles } from '../../src/worker/cluster/cluster-files';
import {
  DATABASE_ROLE,
  POSTGRES_MISSING,
  PostgresCluster,
  findPostgresBin,
  runningPostgres,
} from '../../src/worker/cluster/postgres-cluster';
import { postgresUser } from '../../src/worker/cluster/postgres-user';
import { freePort } from '../../src/worker/free-port';

export const S3_TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A real S3-compatible server (s3rver) on 127.0.0.1 with `bucket` created, for the S3 blob store. */
export async function startS3Server(bucket: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-s3-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_TEST_CREDENTIALS,
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    endpoint,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * A real PostgreSQL for the blob store's tests: the distribution's server in a throwaway database
 * cluster, run as `durable-agent cluster` runs it (its own initdb, password authentication, the
 * loopback address only; as an unprivileged user when root). Where PostgreSQL is not installed,
 * PGlite stands in, saying so; in CI that fails instead.
 */
export async function startPostgresServer(): Promise<{ url: string; close(): Promise<void> }> {
  const bin = findPostgresBin();
  if (!bin) {
    if (process.env.CI === 'true')
      throw new Error(`the blob store tests need PostgreSQL: ${POSTGRES_MISSING}`);
    console.warn(`no PostgreSQL here (${POSTGRES_MISSING}): PGlite stands in for it`);
    return startPgliteServer();
  }
  const files = clusterFiles(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-pg-')));
  const quiet = () => undefined;
  const user = postgresUser(files.dir, quiet);
  // Another user runs PostgreSQL: it must pass through the directory to its own files.
  await chmod(files.dir, user.other ? 0o711 : 0o700);
  await mkdir(files.logs, { mode: user.other ? 0o711 : 0o700 });
  const postgres = new PostgresCluster(files, bin, user, quiet);
  await postgres.ensureInitialized();
  await postgres.start(await freePort());
  const running = runningPostgres(files)!;
  return {
    url: `postgres://${DATABASE_ROLE}:${encodeURIComponent(postgres.password())}@127.0.0.1:${running.port}/postgres`,
    async close() {
      await postgres.stop();
      await rm(files.dir, { recursive: true, force: true });
    },
  };
}

/**
 * PGlite (Postgres compiled to WebAssembly) served over the wire protocol on 127.0.0.1 by a child
 * process, so the `pg` client talks to it as to any server (PGlite cannot load inside jest).
 */
async function startPgliteServer(): Promise<{ url: string; close(): Promise<void> }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'pglite-server.mjs')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the PGlite server exited (${code}) before listening`)));
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async close() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
