import {
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import type { BlobStore } from './blob-store';
import { assertBlobKey, blobKeyOf } from './blob-key';

export interface S3BlobStoreOptions {
  bucket: string;
  /** Prepended to every object key, e.g. `durable-agent/blobs/`. */
  prefix?: string;
  /** For S3-compatible servers (MinIO, Ceph, R2…); AWS itself when absent. */
  endpoint?: string;
  region?: string;
  /** `http://host/bucket/key` addressing, which most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** Credentials come from the standard AWS chain (environment, profile, instance role) when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * Blobs as objects of an S3 bucket, named by their SHA-256. The bucket must exist; every worker
 * and client of a namespace must use the same one.
 */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;
  private readonly prefix: string;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.prefix = options.prefix ?? '';
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.forcePathStyle ? { forcePathStyle: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    });
  }

  async put(bytes: Uint8Array): Promise<string> {
    const key = blobKeyOf(bytes);
    if (await this.exists(key)) return key;
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key, Body: bytes }),
    );
    return key;
  }

  async get(key: string): Promise<Uint8Array> {
    assertBlobKey(key);
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }),
      );
      return await object.Body!.transformToByteArray();
    } catch (error) {
      if (isMissing(error)) {
        throw new Error(
          `payload blob ${key} is not in s3://${this.options.bucket}/${this.prefix}: every worker and client must use the same blob store`,
        );
      }
      throw error;
    }
  }

  close(): void {
    this.client.destroy();
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.prefix + key }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }
}

function isMissing(error: unknown): boolean {
  return (
    error instanceof S3ServiceException &&
    (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata.httpStatusCode === 404)
  );
}
