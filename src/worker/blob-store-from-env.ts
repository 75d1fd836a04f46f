import path from 'node:path';
import { type BlobStore, DirectoryBlobStore } from './blob-store';
import { dataDir } from '../platform/paths';
import { BLOB_TABLE_NAME, PostgresBlobStore } from './postgres-blob-store';
import { S3BlobStore } from './s3-blob-store';

/**
 * The blob store the environment names (DURABLE_AGENT_BLOB_STORE): `directory` (default,
 * DURABLE_AGENT_BLOB_DIR), `s3` (DURABLE_AGENT_BLOB_S3_*) or `postgres` (DURABLE_AGENT_BLOB_POSTGRES_*).
 * A missing or bad setting is an error naming the variable. Nothing is connected until a blob
 * is stored or read.
 */
export function blobStoreFromEnv(env: NodeJS.ProcessEnv): BlobStore {
  const kind = env.DURABLE_AGENT_BLOB_STORE || 'directory';
  switch (kind) {
    case 'directory':
      return new DirectoryBlobStore(env.DURABLE_AGENT_BLOB_DIR || path.join(dataDir(env), 'blobs'));
    case 's3': {
      const region = env.DURABLE_AGENT_BLOB_S3_REGION || env.AWS_REGION;
      const forcePathStyle = env.DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE;
      if (forcePathStyle !== undefined && !['', 'true', 'false'].includes(forcePathStyle)) {
        throw new Error(
          `DURABLE_AGENT_BLOB_S3_FORCE_PATH_STYLE must be true or false; got ${forcePathStyle}`,
        );
      }
      return new S3BlobStore({
        bucket: required(env, 'DURABLE_AGENT_BLOB_S3_BUCKET', 's3'),
        ...(env.DURABLE_AGENT_BLOB_S3_PREFIX ? { prefix: env.DURABLE_AGENT_BLOB_S3_PREFIX } : {}),
        ...(env.DURABLE_AGENT_BLOB_S3_ENDPOINT ? { endpoint: env.DURABLE_AGENT_BLOB_S3_ENDPOINT } : {}),
        ...(region ? { region } : {}),
        forcePathStyle: forcePathStyle === 'true',
      });
    }
    case 'postgres': {
      const table = env.DURABLE_AGENT_BLOB_POSTGRES_TABLE;
      if (table && !BLOB_TABLE_NAME.test(table)) {
        throw new Error(
          `DURABLE_AGENT_BLOB_POSTGRES_TABLE must be a plain lower-case SQL name (letters, digits, _); got ${table}`,
        );
      }
      return new PostgresBlobStore({
        connectionString: required(env, 'DURABLE_AGENT_BLOB_POSTGRES_URL', 'postgres'),
        ...(table ? { table } : {}),
      });
    }
    default:
      throw new Error(`DURABLE_AGENT_BLOB_STORE must be directory, s3 or postgres; got ${kind}`);
  }
}

function required(env: NodeJS.ProcessEnv, name: string, kind: string): string {
  const value = env[name];
  if (!value) throw new Error(`${name} must be set when DURABLE_AGENT_BLOB_STORE is ${kind}`);
  return value;
}
