import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { BlobStoreSettings } from '@sandbox/config';
import { AppError } from '@sandbox/errors';
import { checkObjectKey, type ObjectStore, type StoredObject } from './object-store';

export type S3Settings = Omit<Extract<BlobStoreSettings, { kind: 's3' }>, 'kind'>;

/** AWS credentials; by default the SDK's chain (`AWS_ACCESS_KEY_ID`…, profile, instance role). */
export type S3Credentials = S3ClientConfig['credentials'];

function unavailable(err: unknown): AppError {
  return new AppError('service_unavailable', 'The blob store is unavailable', {
    cause: err,
    retryAfter: 5,
  });
}

/** What `call` resolves with; any failure of it is the store's being unavailable. */
async function orUnavailable<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw unavailable(err);
  }
}

/**
 * Objects in an S3 bucket (or an S3-compatible store's) under a key prefix. Files are uploaded
 * in parts, so that an archive of any size streams from disk without being held in memory.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;

  constructor(settings: S3Settings, credentials?: S3Credentials) {
    this.bucket = settings.bucket;
    this.prefix = settings.prefix;
    this.client = new S3Client({
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
      ...(credentials === undefined ? {} : { credentials }),
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 120_000 },
    });
  }

  private key(key: string): string {
    return this.prefix + checkObjectKey(key);
  }

  async put(key: string, localFile: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: this.key(key),
        Body: createReadStream(localFile),
        ContentType: 'application/octet-stream',
      },
    });
    await orUnavailable(() => upload.done());
  }

  async read(key: string): Promise<StoredObject | undefined> {
    const response = await this.get(key);
    if (response === undefined) return undefined;
    if (!(response.Body instanceof Readable) || response.ContentLength === undefined) {
      throw new AppError('internal_error', 'The blob store sent an object without a body');
    }
    return { size: response.ContentLength, body: response.Body };
  }

  async putText(key: string, text: string): Promise<void> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.key(key),
      Body: text,
      ContentType: 'application/json',
    });
    await orUnavailable(() => this.client.send(command));
  }

  async getText(key: string): Promise<string | undefined> {
    const response = await this.get(key);
    if (response === undefined) return undefined;
    return orUnavailable(async () => (await response.Body?.transformToString('utf-8')) ?? '');
  }

  async delete(key: string): Promise<void> {
    const command = new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) });
    await orUnavailable(() => this.client.send(command));
  }

  /** The object at `key` (its body not read yet), or undefined where there is none. */
  private async get(key: string): Promise<GetObjectCommandOutput | undefined> {
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) });
    try {
      return await this.client.send(command);
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw unavailable(err);
    }
  }
}
