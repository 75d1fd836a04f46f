import { Pool } from 'pg';
import type { BlobStore } from './blob-store';
import { assertBlobKey, blobKeyOf } from './blob-key';

export interface PostgresBlobStoreOptions {
  /** `postgres://user:password@host:5432/database` */
  connectionString: string;
  /** Created when absent. Default `durable_agent_blobs`. */
  table?: string;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Blobs as rows of a PostgreSQL table keyed by their SHA-256. The table is created on first use;
 * a second write of the same bytes changes nothing. Idle connections do not keep a process alive.
 */
export class PostgresBlobStore implements BlobStore {
  private readonly pool: Pool;
  private readonly table: string;
  private ready: Promise<void> | undefined;

  constructor(options: PostgresBlobStoreOptions) {
    this.table = options.table ?? 'durable_agent_blobs';
    if (!TABLE_NAME.test(this.table)) {
      throw new Error(
        `the blob table name must be a plain lower-case SQL name; got ${JSON.stringify(this.table)}`,
      );
    }
    this.pool = new Pool({ connectionString: options.connectionString, max: 4, allowExitOnIdle: true });
    // An idle connection the server dropped (a restart, a failover) is discarded by the pool; the
    // next query opens a new one. Without a listener the error would crash the process.
    this.pool.on('error', () => undefined);
  }

  async put(bytes: Uint8Array): Promise<string> {
    await this.createTable();
    const key = blobKeyOf(bytes);
    await this.pool.query(
      `INSERT INTO ${this.table} (key, bytes) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`,
      [key, Buffer.from(bytes)],
    );
    return key;
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    await this.createTable();
    const result = await this.pool.query<{ bytes: Buffer }>(
      `SELECT bytes FROM ${this.table} WHERE key = $1`,
      [key],
    );
    const row = result.rows[0];
    if (!row) {
      throw new Error(
        `payload blob ${key} is not in table ${this.table}: every worker and client must use the same blob store`,
      );
    }
    return new Uint8Array(row.bytes);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private createTable(): Promise<void> {
    this.ready ??= this.pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (key text PRIMARY KEY, bytes bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      )
      .then(
        () => undefined,
        (error: unknown) => {
          this.ready = undefined;
          throw error;
        },
      );
    return this.ready;
  }
}
