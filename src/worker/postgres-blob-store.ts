import type { Pool } from 'pg';
import type { BlobStore } from './blob-store';
import { assertBlobKey, blobKeyOf } from './blob-key';

export interface PostgresBlobStoreOptions {
  /** `postgres://user:password@host:5432/database` */
  connectionString: string;
  /** Created when absent. Default `durable_agent_blobs`; must match BLOB_TABLE_NAME. */
  table?: string;
}

/** A plain lower-case SQL name, so the table can be named in statements without quoting. */
export const BLOB_TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const UNDEFINED_TABLE = '42P01';
/** What a CREATE TABLE IF NOT EXISTS racing another one (another worker's) can fail with. */
const ALREADY_CREATED = ['42P07', '23505'];

/**
 * Blobs as rows of a PostgreSQL table keyed by their SHA-256; a second write of the same bytes
 * changes nothing. The table is created by the first write that finds it missing, so a role
 * without CREATE can use a table made beforehand. `pg` is loaded and connections are opened on
 * first use, and idle connections do not keep a process alive.
 */
export class PostgresBlobStore implements BlobStore {
  private readonly table: string;
  private pool: Promise<Pool> | undefined;
  private created: Promise<void> | undefined;

  constructor(private readonly options: PostgresBlobStoreOptions) {
    this.table = options.table ?? 'durable_agent_blobs';
    if (!BLOB_TABLE_NAME.test(this.table)) {
      throw new Error(
        `the blob table name must be a plain lower-case SQL name; got ${JSON.stringify(this.table)}`,
      );
    }
  }

  async put(bytes: Uint8Array): Promise<string> {
    const key = blobKeyOf(bytes);
    const pool = await this.connect();
    const insert = () =>
      pool.query(`INSERT INTO ${this.table} (key, bytes) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [
        key,
        Buffer.from(bytes),
      ]);
    try {
      await insert();
    } catch (error) {
      if (codeOf(error) !== UNDEFINED_TABLE) throw error;
      await this.createTable(pool);
      await insert();
    }
    return key;
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    const pool = await this.connect();
    const missing = () =>
      new Error(
        `payload blob ${key} is not in table ${this.table}: every worker and client must use the same blob store`,
      );
    try {
      const result = await pool.query<{ bytes: Buffer }>(`SELECT bytes FROM ${this.table} WHERE key = $1`, [
        key,
      ]);
      const row = result.rows[0];
      if (!row) throw missing();
      return new Uint8Array(row.bytes);
    } catch (error) {
      if (codeOf(error) === UNDEFINED_TABLE) throw missing();
      throw error;
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await (await pool).end();
  }

  private connect(): Promise<Pool> {
    this.pool ??= import('pg').then(({ Pool }) => {
      const pool = new Pool({
        connectionString: this.options.connectionString,
        max: 4,
        allowExitOnIdle: true,
      });
      // An idle connection the server dropped (a restart, a failover) is discarded by the pool; the
      // next query opens a new one. Without a listener the error would crash the process.
      pool.on('error', () => undefined);
      return pool;
    });
    return this.pool;
  }

  private createTable(pool: Pool): Promise<void> {
    this.created ??= pool
      .query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (key text PRIMARY KEY, bytes bytea NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
      )
      .then(
        () => undefined,
        (error: unknown) => {
          if (ALREADY_CREATED.includes(codeOf(error) ?? '')) return;
          this.created = undefined;
          throw error;
        },
      );
    return this.created;
  }
}

/** The SQLSTATE of an error from the server. */
function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
