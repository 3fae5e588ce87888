/**
 * Records port: one single-table store with typed keys (`FEEDBACK#<id>`, `TASK#<suite>#<id>`, …).
 *
 * Drivers: DynamoDB (`lib/drivers/aws/dynamodb-records.ts`) and SQLite (`lib/drivers/local/sqlite-records.ts`).
 * Both pass `test/contract/records.contract.ts`.
 *
 * @example
 * const { written } = await records.put({ pk: 'FEEDBACK#e1', sk: 'EVENT', ...event }, { condition: { kind: 'absent' } });
 * if (!written) duplicates++;
 */

/** The key attributes of an item: the table's and the two secondary indexes'. */
export interface RecordKeys {
  /** Partition key, e.g. `FEEDBACK#<eventId>`. */
  pk: string;
  /** Sort key, e.g. `EVENT` or `VOTE#2026-12-02T10:00:00Z`. */
  sk: string;
  /** Secondary index partition key (index `gsi1`), e.g. `MODEL#<checkpoint>`. */
  gsi1pk?: string;
  /** Secondary index sort key, e.g. the receivedAt timestamp plus id. */
  gsi1sk?: string;
  /** Second index (`gsi2`) partition key, e.g. `FEEDBACKDAY#2026-12-02`. */
  gsi2pk?: string;
  gsi2sk?: string;
}

/** An item: its keys plus any JSON-serialisable attributes. */
export interface RecordItem extends RecordKeys {
  [attribute: string]: unknown;
}

/** Conditions a put may carry; a failed condition is not an error, the put reports `written: false`. */
export type PutCondition =
  /** Write only if no item has this pk+sk (idempotent create). */
  | { kind: 'absent' }
  /** Write if absent, or if the stored item's `field` is strictly less than `value` (newest wins). */
  | { kind: 'absentOrOlder'; field: string; value: string | number }
  /**
   * Write only over the item as it was read (optimistic concurrency): it exists and its `field` equals `value`, or,
   * with `value` undefined, it exists without the field. A writer that loses reads again and decides again.
   */
  | { kind: 'unchanged'; field: string; value: string | number | undefined };

export interface PutOptions {
  condition?: PutCondition;
}

export interface PutResult {
  /** False when the condition failed and nothing was written. */
  written: boolean;
}

/** Sort-key constraint for a query. */
export type SortKeyCondition =
  | { beginsWith: string }
  | { between: [string, string] }
  | { greaterThanOrEqual: string }
  | { lessThanOrEqual: string };

export interface QueryInput {
  /** `'table'` (pk/sk), `'gsi1'` (gsi1pk/gsi1sk) or `'gsi2'` (gsi2pk/gsi2sk). */
  index?: 'table' | 'gsi1' | 'gsi2';
  /** Partition value for the chosen index. */
  partition: string;
  sort?: SortKeyCondition;
  /** Page size; drivers cap it at 1000. */
  limit?: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
  /** Newest (largest sort key) first when true. */
  descending?: boolean;
}

export interface QueryPage {
  items: RecordItem[];
  /** Present when more items follow. Opaque, URL-safe. */
  cursor?: string;
}

export interface RecordsPort {
  put(item: RecordItem, options?: PutOptions): Promise<PutResult>;
  /** Puts many items without conditions (idempotent overwrites); drivers chunk as their backend requires. */
  putMany(items: RecordItem[]): Promise<void>;
  get(pk: string, sk: string): Promise<RecordItem | undefined>;
  query(input: QueryInput): Promise<QueryPage>;
  delete(pk: string, sk: string): Promise<void>;
}
