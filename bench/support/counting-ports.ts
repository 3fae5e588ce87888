/**
 * Wraps the records and blobs ports to count the requests a piece of work makes, as the AWS bill counts them:
 * DynamoDB write and read requests (a put or delete is one write; a get one read; a query one read request per page;
 * putMany one write per item) and S3 PUT / GET / LIST requests. Sizes are kept so capacity units can be estimated.
 */
import type { BlobsPort } from '../../lib/ports/blobs.ts';
import type { RecordsPort } from '../../lib/ports/records.ts';

export interface RequestCounts {
  dynamoWrites: number;
  dynamoWriteUnits: number;
  dynamoReads: number;
  dynamoReadUnits: number;
  s3Puts: number;
  s3Gets: number;
  s3Lists: number;
}

export function emptyCounts(): RequestCounts {
  return { dynamoWrites: 0, dynamoWriteUnits: 0, dynamoReads: 0, dynamoReadUnits: 0, s3Puts: 0, s3Gets: 0, s3Lists: 0 };
}

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
/** On-demand: 1 WRU per 1 KB written; 1 RRU per 4 KB read (strongly consistent). */
const wru = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const rru = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));

export function countingPorts(records: RecordsPort, blobs: BlobsPort, counts: RequestCounts): { records: RecordsPort; blobs: BlobsPort } {
  return {
    records: {
      put: async (item, options) => {
        counts.dynamoWrites++;
        counts.dynamoWriteUnits += wru(size(item));
        return records.put(item, options);
      },
      putMany: async (items) => {
        counts.dynamoWrites += items.length;
        for (const i of items) counts.dynamoWriteUnits += wru(size(i));
        return records.putMany(items);
      },
      get: async (pk, sk) => {
        const r = await records.get(pk, sk);
        counts.dynamoReads++;
        counts.dynamoReadUnits += rru(r ? size(r) : 0);
        return r;
      },
      query: async (input) => {
        const page = await records.query(input);
        counts.dynamoReads++;
        counts.dynamoReadUnits += rru(page.items.reduce((a, i) => a + size(i), 0));
        return page;
      },
      delete: async (pk, sk) => {
        counts.dynamoWrites++;
        counts.dynamoWriteUnits++;
        return records.delete(pk, sk);
      },
    },
    blobs: {
      put: async (key, body, options) => {
        counts.s3Puts++;
        return blobs.put(key, body, options);
      },
      get: async (key) => {
        counts.s3Gets++;
        return blobs.get(key);
      },
      list: async (prefix, options) => {
        counts.s3Lists++;
        return blobs.list(prefix, options);
      },
      delete: async (key) => blobs.delete(key),
    },
  };
}
