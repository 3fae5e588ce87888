/**
 * Blobs port on one S3 bucket.
 *
 * @example
 * const blobs = new S3Blobs(new S3Client({}), 'flywheel-artifacts');
 * await blobs.put('trajectories/t1.json', body, { contentType: 'application/json' });
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { BlobListPage, BlobPutOptions, BlobsPort } from '../../ports/blobs.ts';
import { pageSize } from '../cursor.ts';

export class S3Blobs implements BlobsPort {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(client: S3Client, bucketName: string) {
    this.#client = client;
    this.#bucket = bucketName;
  }

  async put(key: string, body: Uint8Array | string, options: BlobPutOptions = {}): Promise<void> {
    await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: key,
        Body: body,
        ...(options.contentType ? { ContentType: options.contentType } : {}),
      }),
    );
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const result = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }));
      return result.Body ? await result.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (error instanceof NoSuchKey || (error as Error).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  /** The cursor is S3's ContinuationToken. */
  async list(prefix: string, options: { cursor?: string; limit?: number } = {}): Promise<BlobListPage> {
    const result = await this.#client.send(
      new ListObjectsV2Command({
        Bucket: this.#bucket,
        Prefix: prefix,
        MaxKeys: pageSize(options.limit),
        ...(options.cursor ? { ContinuationToken: options.cursor } : {}),
      }),
    );
    const keys = (result.Contents ?? []).flatMap((object) => (object.Key === undefined ? [] : [object.Key]));
    return result.IsTruncated && result.NextContinuationToken ? { keys, cursor: result.NextContinuationToken } : { keys };
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
  }
}
