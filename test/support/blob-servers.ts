import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { clusterFiles } from '../../src/temporal-server/cluster/cluster-files';
import {
  DATABASE_ROLE,
  POSTGRES_MISSING,
  PostgresCluster,
  findPostgresBin,
  runningPostgres,
} from '../../src/temporal-server/cluster/postgres-cluster';
import { postgresUser } from '../../src/temporal-server/cluster/postgres-user';
import { freePort, isListening } from '../../src/platform/free-port';
import { inCi } from './in-ci';

export const S3_TEST_CREDENTIALS = {
  accessKeyId: 'DURABLEAGENTTEST',
  secretAccessKey: 'durable-agent-test-secret',
};

/**
 * A real S3 server on 127.0.0.1 with `bucket` created, for the S3 blob store: versitygw (S3 over a
 * directory, built from the Go module proxy by the global setup, test-servers.ts). Where it cannot be
 * built (no Go), s3rver, a Node emulator, stands in, saying so; in CI that fails instead.
 */
export async function startS3Server(bucket: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-s3-'));
  const versitygw = builtVersitygw();
  const server = versitygw
    ? await startVersitygw(versitygw, directory)
    : await startS3rver(directory, 'versitygw cannot be built here (no Go)');
  const client = new S3Client({
    endpoint: server.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3_TEST_CREDENTIALS,
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  client.destroy();
  return {
    endpoint: server.endpoint,
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

const VERSITYGW_SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'build-versitygw.mjs');

/**
 * versitygw's path, as the global setup built it; undefined where it cannot be built here (no Go).
 * Never built here: a first build takes longer than the hook that asks may wait.
 */
function builtVersitygw(): string | undefined {
  const script = (mode: string) => {
    const result = spawnSync(process.execPath, [VERSITYGW_SCRIPT, mode], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${VERSITYGW_SCRIPT} ${mode} failed: ${result.stderr}`);
    return result.stdout.trim();
  };
  const program = script('--find');
  if (program) return program;
  if ((JSON.parse(script('--missing')) as string[]).length > 0) return undefined;
  throw new Error(
    `versitygw is not built: jest's global setup builds it before any test starts (test/support/test-servers.ts), and says why when it cannot`,
  );
}

async function startVersitygw(program: string, directory: string) {
  const port = await freePort();
  const child = spawn(program, ['--port', `127.0.0.1:${port}`, 'posix', directory], {
    // The root account's keys in the environment, not on a command line.
    env: {
      PATH: process.env.PATH ?? '',
      ROOT_ACCESS_KEY_ID: S3_TEST_CREDENTIALS.accessKeyId,
      ROOT_SECRET_ACCESS_KEY: S3_TEST_CREDENTIALS.secretAccessKey,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 30_000;
  while (!(await isListening('127.0.0.1', port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`versitygw did not start on 127.0.0.1:${port}:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startS3rver(directory: string, why: string) {
  if (inCi()) throw new Error(`the S3 blob store tests need versitygw: ${why}`);
  console.warn(`${why}: s3rver, a Node emulator, stands in for an S3 server`);
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = (await server.run()) as { port: number };
  return { endpoint: `http://127.0.0.1:${port}`, close: () => server.close() };
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
    if (inCi()) throw new Error(`the blob store tests need PostgreSQL: ${POSTGRES_MISSING}`);
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
