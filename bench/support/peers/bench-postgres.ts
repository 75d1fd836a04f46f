import { chmod, mkdir } from 'node:fs/promises';
import { Client } from 'pg';
import { clusterFiles } from '../../../src/temporal-server/cluster/cluster-files';
import {
  DATABASE_ROLE,
  POSTGRES_MISSING,
  PostgresCluster,
  findPostgresBin,
} from '../../../src/temporal-server/cluster/postgres-cluster';
import { postgresUser } from '../../../src/temporal-server/cluster/postgres-user';
import { scratchDir } from '../scratch';
import { stopWithTheRun } from '../server';
import { freePort } from './free-port';

/** A PostgreSQL server the bench runs itself, and how to reach a database on it. */
export interface BenchPostgres {
  /** `PostgreSQL 15.8 ...` and its settings. */
  about: string;
  /** The URL of database `name`, created if it is not there. */
  database(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL from the system's package: `initdb` into a scratch directory, TCP on a free
 * loopback port only, PostgreSQL's defaults otherwise (fsync, synchronous_commit and
 * full_page_writes on), as `durable-agent cluster` runs it (src/temporal-server/cluster).
 */
export async function startBenchPostgres(log: (line: string) => void): Promise<BenchPostgres> {
  const bin = findPostgresBin(process.env);
  if (!bin) throw new Error(POSTGRES_MISSING);
  const files = clusterFiles(scratchDir('postgres-'));
  const user = postgresUser(files.dir, log);
  // Another user runs PostgreSQL when this is root: it must pass through the directory to its own files.
  await mkdir(files.logs, { recursive: true });
  if (user.other) for (const dir of [files.dir, files.logs]) await chmod(dir, 0o711);
  const cluster = new PostgresCluster(files, bin, user, log);
  await cluster.ensureInitialized();
  const port = await freePort();
  const forget = stopWithTheRun({ stop: () => cluster.stop() });
  await cluster.start(port);
  const url = (database: string) =>
    `postgresql://${DATABASE_ROLE}:${encodeURIComponent(cluster.password())}@127.0.0.1:${port}/${database}`;
  const admin = new Client({ connectionString: url('postgres') });
  await admin.connect();
  try {
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'server_version')",
    );
    const value = (name: string) => settings.rows.find((row) => row.name === name)?.setting;
    return {
      about:
        `PostgreSQL ${value('server_version')} (${bin}), its own initdb directory on 127.0.0.1:${port}, ` +
        `fsync ${value('fsync')}, synchronous_commit ${value('synchronous_commit')}, full_page_writes ${value('full_page_writes')}`,
      async database(name) {
        const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${name}"`);
        return url(name);
      },
      async stop() {
        await admin.end().catch(() => undefined);
        await cluster.stop();
        forget();
      },
    };
  } catch (error) {
    await admin.end().catch(() => undefined);
    await cluster.stop();
    forget();
    throw error;
  }
}
