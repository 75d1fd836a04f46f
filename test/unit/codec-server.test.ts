import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { DirectoryBlobStore } from '../../src/worker/blob-store';
import { type RunningCodecServer, startCodecServer } from '../../src/temporal-server/codec-server';
import { BLOB_ENCODING, LargePayloadCodec } from '../../src/worker/large-payload-codec';

const UI = 'http://127.0.0.1:8233';
let server: RunningCodecServer;
let codec: LargePayloadCodec;

beforeAll(async () => {
  codec = new LargePayloadCodec(
    new DirectoryBlobStore(await mkdtemp(path.join(os.tmpdir(), 'codec-blobs-'))),
    {
      compressAboveBytes: 1_024,
      offloadAboveBytes: 1_024,
    },
  );
  server = await startCodecServer({ codec, host: '127.0.0.1', port: 0, allowedOrigins: [UI] });
});
afterAll(() => server.close());

const asJson = (payload: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value).toString('base64'),
    ]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

test('the UI origin gets an offloaded payload back decoded, with CORS headers', async () => {
  const original = defaultPayloadConverter.toPayload({
    text: randomBytes(4_000).toString('hex'),
  });
  const [encoded] = await codec.encode([original]);
  expect(Buffer.from(encoded!.metadata!.encoding!).toString()).toBe(BLOB_ENCODING);

  const preflight = await fetch(`${server.url}/decode`, { method: 'OPTIONS', headers: { origin: UI } });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
  expect(preflight.headers.get('access-control-allow-headers')).toContain('X-Namespace');

  const response = await fetch(`${server.url}/decode`, {
    method: 'POST',
    headers: { origin: UI, 'content-type': 'application/json', 'x-namespace': 'default' },
    body: JSON.stringify({ payloads: [asJson(encoded!)] }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('access-control-allow-origin')).toBe(UI);
  const { payloads } = (await response.json()) as {
    payloads: Array<{ metadata: Record<string, string>; data: string }>;
  };
  expect(payloads[0]).toEqual(asJson(original));
});

test('another web page may not use it; malformed requests get a clear 4xx', async () => {
  const refused = await fetch(`${server.url}/decode`, {
    method: 'POST',
    headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
    body: JSON.stringify({ payloads: [] }),
  });
  expect(refused.status).toBe(403);
  expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  expect(await refused.json()).toEqual({
    message: 'origin https://evil.example may not use this codec server',
  });

  const notJson = await fetch(`${server.url}/decode`, { method: 'POST', body: 'nope' });
  expect(notJson.status).toBe(400);
  const noPayloads = await fetch(`${server.url}/encode`, { method: 'POST', body: '{}' });
  expect(await noPayloads.json()).toEqual({ message: 'the body has no "payloads" array' });
  const wrongRoute = await fetch(`${server.url}/other`, { method: 'POST', body: '{}' });
  expect(wrongRoute.status).toBe(404);
});
