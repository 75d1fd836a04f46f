import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { assertBlobKey, blobKeyOf } from './blob-key';

/** Content-addressed storage for payloads too large for Temporal's history. */
export interface BlobStore {
  /** Stores `bytes` and returns the key they can be read back by. */
  put(bytes: Uint8Array): Promise<string>;
  get(key: string): Promise<Uint8Array>;
}

/**
 * Blobs as files named by their SHA-256, fanned out by the first two hex digits. Writes are atomic
 * (a temporary file renamed into place) and idempotent: the same bytes always land at the same key.
 * Every worker and client of a namespace must see the same directory (a shared volume), since a
 * payload written by one is read by the others.
 */
export class DirectoryBlobStore implements BlobStore {
  constructor(readonly directory: string) {}

  async put(bytes: Uint8Array): Promise<string> {
    const key = blobKeyOf(bytes);
    const file = this.fileOf(key);
    if (await exists(file)) return key;
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes, { mode: 0o600 });
    await rename(temporary, file);
    return key;
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    try {
      return await readFile(this.fileOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new Error(
          `payload blob ${key} is not in ${this.directory}: every worker and client must share the blob directory (DURABLE_AGENT_BLOB_DIR)`,
        );
      }
      throw error;
    }
  }

  private fileOf(key: string): string {
    return path.join(this.directory, key.slice(0, 2), key);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
