/**
 * The first half of every batched ingest route (`POST /v1/feedback`, `/v1/metrics`, `/v1/exposures`): one item or
 * `{ <field>: [...] }`, each item validated on its own (a bad item never costs its siblings), its issues named with
 * the item's path (`metrics[3].value`), and an id repeated inside the request answered `duplicate`.
 */
import type { z } from 'zod';
import { ValidationError } from '../errors.ts';
import { toFieldIssues, type FieldIssue } from './field-issues.ts';

/** One item checked: its parsed value, or every issue it has. */
export type Validated<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** One item's verdict in an ingest answer; the id sits under the item's own id field (`eventId`, `metricEventId`…). */
export type IngestItemResult<K extends string> = { index: number; status: 'accepted' | 'duplicate' | 'rejected'; issues?: FieldIssue[] } & Partial<Record<K, string>>;

export interface CheckIngestItemsOptions<T, K extends string> {
  /** The batch field (`events`, `metrics`, `exposures`). */
  batchField: string;
  /** The envelope check of `{ <batchField>: unknown[] }` (the items are validated one by one). */
  batchShape: z.ZodType;
  /** Words for errors: `feedback batch`. */
  what: string;
  /** The item's id field, under which its answer names it. */
  idField: K;
  /** Validates one raw item; `prefix` is its path (`metrics[3]`, `''` for a single item). */
  validate: (raw: unknown, prefix: string) => Validated<T>;
  idOf: (value: T) => string;
}

export interface CheckedIngestItems<T, K extends string> {
  isBatch: boolean;
  /** How many items the request held. */
  count: number;
  /** One per item, in request order. */
  results: Array<IngestItemResult<K>>;
  /** Valid items, first of their id in the request. */
  accepted: Array<{ index: number; value: T }>;
  /** Every rejected item's issues, flattened. */
  issues: FieldIssue[];
  /** Items whose id an earlier item of the same request had. */
  duplicates: number;
}

/**
 * Checks the items of one ingest request. A malformed batch envelope (not an array, over the limit) throws
 * `ValidationError` naming the batch field; item problems are answered per item.
 *
 * @example
 * const checked = checkIngestItems(body, { batchField: 'metrics', batchShape: MetricBatchShape, what: 'metric batch',
 *   idField: 'metricEventId', validate: (raw, prefix) => validateMetric(raw, now, prefix), idOf: (m) => m.metricEventId });
 * checked.results; // [{ index: 0, metricEventId: 'm1', status: 'accepted' }, { index: 1, status: 'rejected', issues: […] }]
 */
export function checkIngestItems<T, K extends string>(body: unknown, options: CheckIngestItemsOptions<T, K>): CheckedIngestItems<T, K> {
  const { batchField, idField } = options;
  const isBatch = body !== null && typeof body === 'object' && !Array.isArray(body) && batchField in body;
  let raws: unknown[];
  if (isBatch) {
    const shape = options.batchShape.safeParse(body);
    if (!shape.success) throw new ValidationError(`Invalid ${options.what}`, toFieldIssues(shape.error.issues));
    raws = (shape.data as Record<string, unknown[]>)[batchField]!;
  } else {
    raws = [body];
  }
  const results = new Array<IngestItemResult<K>>(raws.length);
  const accepted: Array<{ index: number; value: T }> = [];
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (let i = 0; i < raws.length; i++) {
    const checked = options.validate(raws[i], isBatch ? `${batchField}[${i}]` : '');
    if (!checked.ok) {
      const id = (raws[i] as Record<string, unknown> | null)?.[idField];
      results[i] = { index: i, ...(typeof id === 'string' ? { [idField]: id } : {}), status: 'rejected', issues: checked.issues } as IngestItemResult<K>;
      for (const issue of checked.issues) issues.push(issue);
      continue;
    }
    const id = options.idOf(checked.value);
    if (seen.has(id)) {
      results[i] = { index: i, [idField]: id, status: 'duplicate' } as IngestItemResult<K>;
      duplicates++;
      continue;
    }
    seen.add(id);
    accepted.push({ index: i, value: checked.value });
    results[i] = { index: i, [idField]: id, status: 'accepted' } as IngestItemResult<K>;
  }
  return { isBatch, count: raws.length, results, accepted, issues, duplicates };
}
