/**
 * Blobs port: objects by key (trajectories, raw archives, logs, patches, oversized queue bodies).
 *
 * Drivers: S3 (`lib/drivers/aws/s3-blobs.ts`) and the filesystem (`lib/drivers/local/fs-blobs.ts`).
 * Both pass `test/contract/blobs.contract.ts`.
 *
 * @example
 * await blobs.put('raw/feedback/dt=2026-12-02/batch-1.jsonl', lines, { contentType: 'application/x-ndjson' });
 */
export interface BlobPutOptions {
  contentType?: string;
}

export interface BlobListPage {
  keys: string[];
  cursor?: string;
}

export interface BlobsPort {
  put(key: string, body: Uint8Array | string, options?: BlobPutOptions): Promise<void>;
  /** The object's bytes, or undefined when no object has this key. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Keys under a prefix, in lexicographic order. */
  list(prefix: string, options?: { cursor?: string; limit?: number }): Promise<BlobListPage>;
  delete(key: string): Promise<void>;
}
