import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { BlobStore } from './blob-store';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

export const GZIP_ENCODING = 'binary/durable-agent-gzip';
export const BLOB_ENCODING = 'binary/durable-agent-blob';

export interface LargePayloadLimits {
  /** Payloads larger than this (encoded, in bytes) are gzipped. */
  compressAboveBytes: number;
  /** Gzipped payloads still larger than this go to the blob store; history keeps a reference. */
  offloadAboveBytes: number;
}

/** Well under Temporal's 2 MB payload limit and its 4 MB gRPC message limit, so history stays small. */
export const DEFAULT_PAYLOAD_LIMITS: LargePayloadLimits = {
  compressAboveBytes: 32 * 1024,
  offloadAboveBytes: 256 * 1024,
};

interface BlobReference {
  key: string;
  bytes: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Keeps every payload that enters history small: large ones are compressed, and those still large
 * are stored in a blob store and passed by reference. The whole original payload (metadata and data)
 * is what gets compressed, so decoding restores it exactly. Small payloads pass untouched, so tools
 * like the `temporal` CLI still read and write everyday signals and queries.
 */
export class LargePayloadCodec implements PayloadCodec {
  constructor(
    private readonly store: BlobStore,
    private readonly limits: LargePayloadLimits = DEFAULT_PAYLOAD_LIMITS,
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.encodeOne(payload)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const original = temporal.api.common.v1.Payload.encode(payload).finish();
    if (original.length <= this.limits.compressAboveBytes) return payload;
    const compressed = await gzipAsync(original);
    if (compressed.length <= this.limits.offloadAboveBytes) {
      return { metadata: { encoding: encoder.encode(GZIP_ENCODING) }, data: compressed };
    }
    const reference: BlobReference = { key: await this.store.put(compressed), bytes: compressed.length };
    return {
      metadata: { encoding: encoder.encode(BLOB_ENCODING) },
      data: encoder.encode(JSON.stringify(reference)),
    };
  }

  private async decodeOne(payload: Payload): Promise<Payload> {
    const encoding = payload.metadata?.encoding ? decoder.decode(payload.metadata.encoding) : undefined;
    if (encoding === GZIP_ENCODING) return this.restore(payload.data!);
    if (encoding === BLOB_ENCODING) {
      const reference = JSON.parse(decoder.decode(payload.data!)) as BlobReference;
      return this.restore(await this.store.get(reference.key));
    }
    return payload;
  }

  private async restore(compressed: Uint8Array): Promise<Payload> {
    const decoded = temporal.api.common.v1.Payload.decode(await gunzipAsync(compressed));
    return { metadata: decoded.metadata ?? {}, data: decoded.data ?? undefined };
  }
}
