/**
 * A record codec: one schema per stored record kind, used by its writers (`encode`) and its readers (`decode`), so a
 * record is typed where it is read and a malformed one fails where it is read, naming the record and the field.
 *
 * @example
 * export const voteRecord = defineRecordCodec({
 *   kind: 'feedback vote',
 *   schema: z.object({ eventId: z.string(), rating: z.enum(['up', 'down', 'none']) }),
 *   keys: (vote) => ({ pk: `FBKEY#${vote.eventId}`, sk: 'CURRENT' }),
 * });
 * await records.put(voteRecord.encode(vote));
 * const stored = voteRecord.decode(await records.get(pk, sk)); // typed; throws MalformedRecordError if not a vote
 */
import type { z } from 'zod';
import { FlywheelError } from '../errors.ts';
import type { RecordItem, RecordKeys } from '../ports/records.ts';
import { firstIssue } from './field-issues.ts';

/** The error name a state machine's Catch (or a log query) matches: `Flywheel.MalformedRecord`. */
export const MALFORMED_RECORD = 'MalformedRecord';

/** A stored record that does not match its kind's schema: a bug or a hand edit, never fixed by a retry. */
export class MalformedRecordError extends FlywheelError {
  readonly pk: string;
  readonly sk: string;
  /** Dotted path of the first bad field (`rating`, `perTask.3.passed`), or `''` for the record as a whole. */
  readonly field: string;
  constructor(kind: string, pk: string, sk: string, field: string, message: string) {
    super(MALFORMED_RECORD, `${kind} record ${pk} / ${sk}: ${field ? `field "${field}": ` : ''}${message}`);
    this.pk = pk;
    this.sk = sk;
    this.field = field;
  }
}

const KEY_ATTRIBUTE_SET: ReadonlySet<string> = new Set(['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk']);

/** Reads one record kind: the value of a stored item, checked against the kind's schema. */
export interface RecordView<T> {
  /** Words for errors: `feedback event`, `suite`. */
  readonly kind: string;
  /** The value of a stored item, without its key attributes; throws `MalformedRecordError` naming the field. */
  decode(item: RecordItem): T;
  /** `decode`, or undefined for an absent item (the shape of `records.get`). */
  decodeIfPresent(item: RecordItem | undefined): T | undefined;
}

export interface RecordCodec<T> extends RecordView<T> {
  /** The item to store: the keys `keys(value)` names plus the value's fields, checked against the schema. */
  encode(value: T): RecordItem;
}

export interface RecordViewOptions<Schema extends z.ZodType> {
  kind: string;
  /** The record's fields, key attributes excluded. Unknown stored attributes are dropped on decode. */
  schema: Schema;
  /**
   * Fields the keys already hold (`feedbackKey` of `FBKEY#<feedbackKey>`): not stored twice by `encode`, read back
   * from the keys by `decode`.
   */
  fromKeys?: (keys: RecordKeys) => Partial<z.input<Schema>>;
}

export interface RecordCodecOptions<Schema extends z.ZodType> extends RecordViewOptions<Schema> {
  /** Where a value is stored. */
  keys: (value: z.output<Schema>) => RecordKeys;
}

/**
 * A read-only view of a record kind: the fields one reader needs, checked (e.g. the fields of a feedback event the
 * failure-mode chain reads, which tolerates a comment that is not text).
 *
 * @example
 * const draftStatus = defineRecordView({ kind: 'eval draft', schema: z.object({ status: z.enum(['pending', 'approved']) }) });
 * const status = draftStatus.decodeIfPresent(await records.get(pk, sk))?.status;
 */
export function defineRecordView<Schema extends z.ZodType>(options: RecordViewOptions<Schema>): RecordView<z.output<Schema>> {
  const { kind, schema, fromKeys } = options;
  const check = checker(kind, schema);
  const decode = (item: RecordItem): z.output<Schema> => {
    const fields: Record<string, unknown> = fromKeys ? { ...fromKeys(item) } : {};
    // Copied without the key attributes rather than copied whole and `delete`d: a delete turns the object into a
    // slow dictionary, and the processor decodes on its hot path.
    for (const name in item) if (!KEY_ATTRIBUTE_SET.has(name)) fields[name] = item[name];
    return check(fields, item.pk, item.sk);
  };
  return { kind, decode, decodeIfPresent: (item) => (item === undefined ? undefined : decode(item)) };
}

export function defineRecordCodec<Schema extends z.ZodType>(
  options: RecordCodecOptions<Schema>,
): RecordCodec<z.output<Schema>> {
  const { kind, schema, keys, fromKeys } = options;
  const check = checker(kind, schema);
  return {
    ...defineRecordView(options),
    encode(value) {
      const key = keys(value);
      const checked = check(value, key.pk, key.sk) as Record<string, unknown>;
      if (!fromKeys) return { ...checked, ...key };
      const implied = fromKeys(key);
      const item: RecordItem = { ...key };
      for (const name in checked) if (!(name in implied)) item[name] = checked[name];
      return item;
    },
  };
}

/** Parses a value against the schema, or throws `MalformedRecordError` naming the first bad field. */
function checker<Schema extends z.ZodType>(kind: string, schema: Schema) {
  return (value: unknown, pk: string, sk: string): z.output<Schema> => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    const { path, message } = firstIssue(result.error);
    throw new MalformedRecordError(kind, pk, sk, path, message);
  };
}
