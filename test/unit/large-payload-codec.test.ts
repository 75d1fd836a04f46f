import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createGzip, gzip } from 'node:zlib';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { DirectoryBlobStore } from '../../src/worker/blob-store';
import { BLOB_ENCODING, GZIP_ENCODING, LargePayloadCodec } from '../../src/worker/large-payload-codec';

const gzipAsync = promisify(gzip);
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

/** A gzip stream of `bytes` zeros, made a megabyte at a time so the test itself stays small. */
async function gzipOfZeros(bytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024);
  const gzip = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (part: Buffer) => parts.push(part));
  const done = new Promise((resolve) => gzip.on('end', resolve));
  for (let written = 0; written < bytes; written += chunk.length) {
    if (!gzip.write(chunk)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await done;
  return Buffer.concat(parts);
}

test('a gzip bomb is refused with a clear error instead of inflating: decoding stops at the payload limit', async () => {
  const { codec } = await codecInTempDir();
  const bomb = await gzipOfZeros(1024 * 1024 * 1024);
  expect(bomb.length).toBeLessThan(2 * 1024 * 1024);
  const payload = { metadata: { encoding: new TextEncoder().encode(GZIP_ENCODING) }, data: bomb };
  await expect(codec.decode([payload])).rejects.toThrow(/inflates past the 67108864-byte limit/);
  const small = new LargePayloadCodec(
    new DirectoryBlobStore(await mkdtemp(path.join(os.tmpdir(), 'blobs-'))),
    {
      ...limits,
      maxPayloadBytes: 64 * 1024,
    },
  );
  const modest = await gzipOfZeros(1024 * 1024);
  await expect(
    small.decode([{ metadata: { encoding: new TextEncoder().encode(GZIP_ENCODING) }, data: modest }]),
  ).rejects.toThrow(/inflates past the 65536-byte limit/);
});

test('the codec never writes a payload it would refuse to read back', async () => {
  const codec = new LargePayloadCodec(
    new DirectoryBlobStore(await mkdtemp(path.join(os.tmpdir(), 'blobs-'))),
    {
      ...limits,
      maxPayloadBytes: 16 * 1024,
    },
  );
  const payload = defaultPayloadConverter.toPayload({ text: 'x'.repeat(32 * 1024) });
  await expect(codec.encode([payload])).rejects.toThrow(/over the 16384-byte limit/);
});

test('a blob altered in the store is refused, never decoded as if it were the original', async () => {
  const { codec, directory } = await codecInTempDir();
  const payload = defaultPayloadConverter.toPayload({ bytes: randomBytes(64 * 1024).toString('base64') });
  const [encoded] = await codec.encode([payload]);
  expect(encodingOf(encoded!)).toBe(BLOB_ENCODING);
  const { key } = JSON.parse(new TextDecoder().decode(encoded!.data!)) as { key: string };
  const file = path.join(directory, key.slice(0, 2), key);
  const forged = await gzipAsync(
    temporal.api.common.v1.Payload.encode(defaultPayloadConverter.toPayload({ forged: true })).finish(),
  );
  await writeFile(file, forged);
  await expect(codec.decode([encoded!])).rejects.toThrow(/does not match its hash/);
});
