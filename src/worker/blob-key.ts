import { createHash } from 'node:crypto';

const KEY = /^[0-9a-f]{64}$/;

/** Blobs are content addressed: the key is the SHA-256 of the bytes, so a write is idempotent. */
export function blobKeyOf(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function assertBlobKey(key: string): void {
  if (!KEY.test(key)) throw new Error(`not a blob key: ${JSON.stringify(key.slice(0, 80))}`);
}
