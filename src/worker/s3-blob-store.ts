import type * as S3Sdk from '@aws-sdk/client-s3';
import type { BlobStore } from './blob-store';
import { assertBlobKey, blobKeyOf } from './blob-key';

export interface S3BlobStoreOptions {
  bucket: string;
  /** Prepended to every object key, e.g. `durable-agent/blobs/`. */
  prefix?: string;
  /** For S3-compatible servers (MinIO, Ceph, R2…); AWS itself when absent. */
  endpoint?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** `http://host/bucket/key` addressing, which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Credentials come from the standard AWS chain (environment, profile, instance role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

interface S3Connection {
  sdk: typeof S3Sdk;
  client: S3Sdk.S3Client;
}

/**
 * Blobs as objects of an S3 bucket, named by their SHA-256. The bucket must exist; every worker
 * and client of a namespace must use the same one. The AWS SDK is loaded on first use: it takes
 * a few hundred milliseconds, which a command that never meets a large payload should not pay.
 */
export class S3BlobStore implements BlobStore {
  private readonly prefix: string;
  private connection: Promise<S3Connection> | undefined;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.prefix = options.prefix ?? '';
  }

  async put(bytes: Uint8Array): Promise<string> {
    const key = blobKeyOf(bytes);
    const { sdk, client } = await this.connect();
    if (await this.exists(key)) return key;
    await client.send(
      new sdk.PutObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key, Body: bytes }),
    );
    return key;
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    const { sdk, client } = await this.connect();
    try {
      const object = await client.send(
        new sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }),
      );
      return await object.Body!.transformToByteArray();
    } catch (error) {
      if (isMissing(sdk, error)) {
        throw new Error(
          `payload blob ${key} is not in s3://${this.options.bucket}/${this.prefix}: every worker and client must use the same blob store`,
        );
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection) (await connection).client.destroy();
  }

  private connect(): Promise<S3Connection> {
    this.connection ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        region: this.options.region ?? 'us-east-1',
        ...(this.options.endpoint ? { endpoint: this.options.endpoint } : {}),
        ...(this.options.forcePathStyle ? { forcePathStyle: true } : {}),
        ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
      }),
    }));
    return this.connection;
  }

  private async exists(key: string): Promise<boolean> {
    const { sdk, client } = await this.connect();
    try {
      await client.send(new sdk.HeadObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }));
      return true;
    } catch (error) {
      if (isMissing(sdk, error)) return false;
      throw error;
    }
  }
}

/** A missing object; a missing bucket is a configuration error and reported as the SDK says. */
function isMissing(sdk: typeof S3Sdk, error: unknown): boolean {
  return (
    error instanceof sdk.S3ServiceException &&
    error.name !== 'NoSuchBucket' &&
    (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)
  );
}
