import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { ApplicationFailure, type Payload, type PayloadCodec } from '@temporalio/common';
import { PAYLOAD_STORE_UNAVAILABLE } from '../shared/tool-errors';
import { temporal } from '@temporalio/proto';
import { blobKeyOf } from './blob-key';
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
  /**
   * The largest payload (encoded, in bytes) this codec writes, and so the most a compressed one may
   * inflate to when read. A payload in history is input anyone with access to the namespace can
   * write, and decoding runs again on every workflow-task retry: without this cap a few kilobytes of
   * gzip would inflate to gigabytes in every worker that reads them.
   */
  maxPayloadBytes: number;
}

/** Well under Temporal's 2 MB payload limit and its 4 MB gRPC message limit, so history stays small. */
export const DEFAULT_PAYLOAD_LIMITS: LargePayloadLimits = {
  compressAboveBytes: 32 * 1024,
  offloadAboveBytes: 256 * 1024,
  // Tool results reach history cut to 64 KB and model answers are far smaller; transcripts that
  // travel as one payload (continue-as-new, compaction) stay well inside this.
  maxPayloadBytes: 64 * 1024 * 1024,
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
  private readonly limits: LargePayloadLimits;

  /** Limits left out take their defaults. */
  constructor(
    private readonly store: BlobStore,
    limits: Partial<LargePayloadLimits> = {},
  ) {
    this.limits = { ...DEFAULT_PAYLOAD_LIMITS, ...limits };
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.encodeOne(payload)));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.all(payloads.map((payload) => this.decodeOne(payload)));
  }

  private async encodeOne(payload: Payload): Promise<Payload> {
    const original = temporal.api.common.v1.Payload.encode(payload).finish();
    if (original.length <= this.limits.compressAboveBytes) return payload;
    if (original.length > this.limits.maxPayloadBytes) {
      throw new Error(
        `payload of ${original.length} bytes is over the ${this.limits.maxPayloadBytes}-byte limit a payload may have (DURABLE_AGENT_MAX_PAYLOAD_BYTES)`,
      );
    }
    const compressed = await gzipAsync(original);
    if (compressed.length <= this.limits.offloadAboveBytes) {
      return { metadata: { encoding: encoder.encode(GZIP_ENCODING) }, data: compressed };
    }
    const key = await this.store.put(compressed).catch((error: Error) => {
      // What fails here is whatever needed the payload: a workflow task (tried again until the
      // store is back) or an activity's result (tried again as its retry policy allows).
      throw ApplicationFailure.retryable(
        `the blob store could not take a payload of ${compressed.length} bytes (compressed): ${error.message}`,
        PAYLOAD_STORE_UNAVAILABLE,
      );
    });
    const reference: BlobReference = { key, bytes: compressed.length };
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
      const bytes = await this.store.get(reference.key);
      // The key is the content's SHA-256: bytes that do not hash to it were changed in the store.
      if (blobKeyOf(bytes) !== reference.key) {
        throw new Error(
          `payload blob ${reference.key} does not match its hash: the blob store's copy was altered`,
        );
      }
      return this.restore(bytes);
    }
    return payload;
  }

  private async restore(compressed: Uint8Array): Promise<Payload> {
    const maxOutputLength = this.limits.maxPayloadBytes;
    const inflated = await gunzipAsync(compressed, { maxOutputLength }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) {
          throw new Error(
            `compressed payload inflates past the ${maxOutputLength}-byte limit a payload may have; refused (DURABLE_AGENT_MAX_PAYLOAD_BYTES)`,
          );
        }
        throw error;
      },
    );
    const decoded = temporal.api.common.v1.Payload.decode(inflated);
    return { metadata: decoded.metadata ?? {}, data: decoded.data ?? undefined };
  }
}
