import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { DirectoryBlobStore } from '../../src/worker/blob-store';
import { BLOB_ENCODING, GZIP_ENCODING, LargePayloadCodec } from '../../src/worker/large-payload-codec';

const limits = { compressAboveBytes: 1_024, offloadAboveBytes: 8_192 };
const encodingOf = (payload: { metadata?: Record<string, Uint8Array> | null }) =>
  new TextDecoder().decode(payload.metadata?.encoding ?? new Uint8Array());

async function codecInTempDir() {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'blobs-'));
  return { directory, codec: new LargePayloadCodec(new DirectoryBlobStore(directory), limits) };
}

test('small payloads pass untouched, so plain JSON senders (the temporal CLI) keep working', async () => {
  const { codec } = await codecInTempDir();
  const payload = defaultPayloadConverter.toPayload({ toolCallId: 'c1', decision: 'allow_once' });
  expect(await codec.encode([payload])).toEqual([payload]);
  expect(await codec.decode([payload])).toEqual([payload]);
});

test('large compressible payloads are gzipped and restored exactly', async () => {
  const { codec, directory } = await codecInTempDir();
  const value = { text: 'all work and no play '.repeat(2_000) };
  const payload = defaultPayloadConverter.toPayload(value);
  const [encoded] = await codec.encode([payload]);
  expect(encodingOf(encoded!)).toBe(GZIP_ENCODING);
  expect(encoded!.data!.length).toBeLessThan(limits.offloadAboveBytes);
  const [decoded] = await codec.decode([encoded!]);
  expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(value);
  expect(await readdir(directory)).toEqual([]);
});

test('payloads still large after compression go to the blob store and history keeps a small reference', async () => {
  const { codec } = await codecInTempDir();
  const value = { bytes: randomBytes(64 * 1024).toString('base64') };
  const payload = defaultPayloadConverter.toPayload(value);
  const [encoded] = await codec.encode([payload]);
  expect(encodingOf(encoded!)).toBe(BLOB_ENCODING);
  expect(encoded!.data!.length).toBeLessThan(200);
  const [decoded] = await codec.decode([encoded!]);
  expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual(value);
  // The same bytes are stored once: encoding again gives the same reference.
  expect((await codec.encode([payload]))[0]).toEqual(encoded);
});

test('a reference whose blob is missing fails with a reason, and a forged key is refused', async () => {
  const { codec } = await codecInTempDir();
  const [encoded] = await codec.encode([
    defaultPayloadConverter.toPayload({ bytes: randomBytes(64 * 1024).toString('base64') }),
  ]);
  const { codec: elsewhere } = await codecInTempDir();
  await expect(elsewhere.decode([encoded!])).rejects.toThrow(/must share the blob directory/);
  const forged = {
    metadata: { encoding: new TextEncoder().encode(BLOB_ENCODING) },
    data: new TextEncoder().encode(JSON.stringify({ key: '../../etc/passwd', bytes: 1 })),
  };
  await expect(codec.decode([forged])).rejects.toThrow(/not a blob key/);
});
