/**
 * Records port on SQLite (`node:sqlite`), with DynamoDB's semantics: pk+sk identity, conditional puts, sparse
 * indexes `gsi1`/`gsi2` (an item is in an index only when both its index keys are strings), sort keys ordered by
 * UTF-8 bytes (SQLite's BINARY collation on a UTF-8 database; never LIKE, which folds case), pages capped at 1000,
 * and an opaque cursor that is present only when more items follow.
 *
 * @example
 * const records = new SqliteRecords(openDatabase('.flywheel/records.sqlite'));
 * await records.put(item, { condition: { kind: 'absentOrOlder', field: 'updatedAt', value: now } });
 */
import type { DatabaseSync } from 'node:sqlite';
import type { PutOptions, PutResult, QueryInput, QueryPage, RecordItem, RecordsPort } from '../../ports/records.ts';
import { ValidationError } from '../../errors.ts';
import { decodeCursor, encodeCursor, pageSize } from '../cursor.ts';
import { z } from 'zod';
import { groupCommit, StatementCache, type GroupCommit } from './sqlite-database.ts';
import { defineRowCodec, jsonColumn } from './sqlite-rows.ts';
import { compareUtf8, prefixSuccessor } from './utf8-order.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  pk TEXT NOT NULL,
  sk TEXT NOT NULL,
  gsi1pk TEXT, gsi1sk TEXT,
  gsi2pk TEXT, gsi2sk TEXT,
  item TEXT NOT NULL,
  PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_gsi1 ON records (gsi1pk, gsi1sk, pk, sk) WHERE gsi1pk IS NOT NULL AND gsi1sk IS NOT NULL;
CREATE INDEX IF NOT EXISTS records_gsi2 ON records (gsi2pk, gsi2sk, pk, sk) WHERE gsi2pk IS NOT NULL AND gsi2sk IS NOT NULL;
`;

const INDEX_COLUMNS = {
  table: { partition: 'pk', sort: 'sk', order: ['sk'] },
  gsi1: { partition: 'gsi1pk', sort: 'gsi1sk', order: ['gsi1sk', 'pk', 'sk'] },
  gsi2: { partition: 'gsi2pk', sort: 'gsi2sk', order: ['gsi2sk', 'pk', 'sk'] },
} as const;

const UPSERT = `INSERT INTO records (pk, sk, gsi1pk, gsi1sk, gsi2pk, gsi2sk, item) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (pk, sk) DO UPDATE SET gsi1pk = excluded.gsi1pk, gsi1sk = excluded.gsi1sk,
  gsi2pk = excluded.gsi2pk, gsi2sk = excluded.gsi2sk, item = excluded.item`;

/** A stored item: any attributes, with string keys (index keys of other types leave it out of that index). */
const recordItem = z.custom<RecordItem>(
  (value) => typeof value === 'object' && value !== null && 'pk' in value && typeof value.pk === 'string' && 'sk' in value && typeof value.sk === 'string',
  'not an item with string pk and sk',
);

/** A page cursor: the last item's sort columns (their count checked against the index queried). */
const CURSOR_SCHEMA = z.array(z.string());

const itemRow = defineRowCodec('records', { item: jsonColumn(recordItem) });

/** A row of a query page: the item and the sort columns its cursor is made of. */
const pageRow = defineRowCodec('records', {
  item: jsonColumn(recordItem),
  pk: z.string(),
  sk: z.string(),
  gsi1sk: z.string().nullable(),
  gsi2sk: z.string().nullable(),
});

function indexKey(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function checkKeys(item: RecordItem): void {
  if (typeof item.pk !== 'string' || item.pk === '' || typeof item.sk !== 'string' || item.sk === '') {
    throw new ValidationError('A record needs non-empty string pk and sk', [{ path: 'pk/sk', message: 'required' }]);
  }
}

/** DynamoDB's `a < b` for the absentOrOlder condition: false when the types differ or the attribute is missing. */
function isOlder(stored: unknown, value: string | number): boolean {
  if (typeof value === 'number') return typeof stored === 'number' && stored < value;
  return typeof stored === 'string' && compareUtf8(stored, value) < 0;
}

export class SqliteRecords implements RecordsPort {
  readonly #sql: StatementCache;
  readonly #writes: GroupCommit;

  constructor(db: DatabaseSync) {
    db.exec(SCHEMA);
    this.#sql = new StatementCache(db);
    this.#writes = groupCommit(db);
  }

  #upsert(item: RecordItem): void {
    this.#sql
      .get(UPSERT)
      .run(item.pk, item.sk, indexKey(item.gsi1pk), indexKey(item.gsi1sk), indexKey(item.gsi2pk), indexKey(item.gsi2sk), JSON.stringify(item));
  }

  async put(item: RecordItem, options: PutOptions = {}): Promise<PutResult> {
    checkKeys(item);
    const condition = options.condition;
    // Concurrent puts (a consumer's Promise.all over a batch) share one transaction and one fsync.
    return this.#writes.run(() => {
      if (!condition) {
        this.#upsert(item);
        return { written: true };
      }
      const stored = itemRow.decodeIfPresent(this.#sql.get('SELECT item FROM records WHERE pk = ? AND sk = ?').get(item.pk, item.sk));
      if (!stored && condition.kind === 'unchanged') return { written: false };
      if (stored) {
        if (condition.kind === 'absent') return { written: false };
        const previous = stored.item;
        if (condition.kind === 'unchanged') {
          if (condition.value === undefined ? condition.field in previous : previous[condition.field] !== condition.value) return { written: false };
        } else if (!isOlder(previous[condition.field], condition.value)) return { written: false };
      }
      this.#upsert(item);
      return { written: true };
    });
  }

  /** One transaction for the whole batch: one commit (one fsync) however many items. */
  async putMany(items: RecordItem[]): Promise<void> {
    if (items.length === 0) return;
    items.forEach(checkKeys);
    await this.#writes.run(() => {
      for (const item of items) this.#upsert(item);
    });
  }

  async get(pk: string, sk: string): Promise<RecordItem | undefined> {
    return itemRow.decodeIfPresent(this.#sql.get('SELECT item FROM records WHERE pk = ? AND sk = ?').get(pk, sk))?.item;
  }

  async query(input: QueryInput): Promise<QueryPage> {
    const index = input.index ?? 'table';
    const columns = INDEX_COLUMNS[index];
    const limit = pageSize(input.limit);
    const where = [`${columns.partition} = ?`, `${columns.sort} IS NOT NULL`];
    const params: string[] = [input.partition];
    const sort = input.sort;
    if (sort) {
      if ('beginsWith' in sort) {
        where.push(`${columns.sort} >= ?`);
        params.push(sort.beginsWith);
        const upper = prefixSuccessor(sort.beginsWith);
        if (upper !== undefined) {
          where.push(`${columns.sort} < ?`);
          params.push(upper);
        }
      } else if ('between' in sort) {
        where.push(`${columns.sort} BETWEEN ? AND ?`);
        params.push(sort.between[0], sort.between[1]);
      } else if ('greaterThanOrEqual' in sort) {
        where.push(`${columns.sort} >= ?`);
        params.push(sort.greaterThanOrEqual);
      } else {
        where.push(`${columns.sort} <= ?`);
        params.push(sort.lessThanOrEqual);
      }
    }
    const direction = input.descending ? 'DESC' : 'ASC';
    if (input.cursor) {
      const after = CURSOR_SCHEMA.safeParse(decodeCursor<unknown>(input.cursor));
      if (!after.success || after.data.length !== columns.order.length) throw new ValidationError('Invalid cursor', [{ path: 'cursor', message: 'not a cursor for this index' }]);
      where.push(`(${columns.order.join(', ')}) ${input.descending ? '<' : '>'} (${columns.order.map(() => '?').join(', ')})`);
      params.push(...after.data);
    }
    const sql = `SELECT pk, sk, gsi1sk, gsi2sk, item FROM records WHERE ${where.join(' AND ')}
      ORDER BY ${columns.order.map((c) => `${c} ${direction}`).join(', ')} LIMIT ${limit + 1}`;
    const rows = this.#sql.get(sql).all(...params);
    const page = pageRow.decodeAll(rows.slice(0, limit));
    const items = page.map((row) => row.item);
    if (rows.length <= limit) return { items };
    const last = page[page.length - 1]!;
    return { items, cursor: encodeCursor(columns.order.map((c) => last[c])) };
  }

  async delete(pk: string, sk: string): Promise<void> {
    await this.#writes.run(() => this.#sql.get('DELETE FROM records WHERE pk = ? AND sk = ?').run(pk, sk));
  }
}
