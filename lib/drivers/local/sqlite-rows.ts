/**
 * Decodes the rows `node:sqlite` returns with one schema per table, so a row is typed where it is read and a
 * malformed one (a hand edit, a column an older build wrote differently) fails there, naming the table and the
 * column, instead of flowing on as a wrong value.
 *
 * @example
 * const messageRow = defineRowCodec('messages', { id: z.string(), body: z.string(), receive_count: z.number().int() });
 * const row = messageRow.decode(statement.get(seq)); // typed; throws MalformedRowError naming messages.<column>
 */
import { z } from 'zod';
import { FlywheelError } from '../../errors.ts';
import { firstIssue } from '../../shared/field-issues.ts';

/** The error name a log query matches: `Flywheel.MalformedRow`. */
export const MALFORMED_ROW = 'MalformedRow';

/** A stored row that does not match its table's schema: a bug or a hand edit, never fixed by a retry. */
export class MalformedRowError extends FlywheelError {
  readonly table: string;
  /** The first bad column (`status`, `spec.timeoutSeconds` inside a JSON column), or `''` for the row as a whole. */
  readonly column: string;
  constructor(table: string, column: string, message: string) {
    super(MALFORMED_ROW, `${table} row: ${column ? `column "${column}": ` : ''}${message}`);
    this.table = table;
    this.column = column;
  }
}

export interface RowCodec<Row> {
  readonly table: string;
  /** The typed row; throws `MalformedRowError` naming the table and column. */
  decode(row: unknown): Row;
  /** `decode`, or undefined when the query found no row (the shape of `StatementSync.get`). */
  decodeIfPresent(row: unknown): Row | undefined;
  decodeAll(rows: readonly unknown[]): Row[];
}

/**
 * A codec for the rows of `table` (or of one query over it) with these columns. Columns the schema does not name
 * are dropped, so a `SELECT *` reads the same after a column is added.
 */
export function defineRowCodec<Shape extends z.ZodRawShape>(table: string, columns: Shape): RowCodec<z.output<z.ZodObject<Shape>>> {
  const schema = z.object(columns);
  const decode = (row: unknown): z.output<z.ZodObject<Shape>> => {
    const result = schema.safeParse(row);
    if (result.success) return result.data;
    const { path, message } = firstIssue(result.error);
    throw new MalformedRowError(table, path, message);
  };
  return {
    table,
    decode,
    decodeIfPresent: (row) => (row === undefined ? undefined : decode(row)),
    decodeAll: (rows) => rows.map(decode),
  };
}

/** A TEXT column holding JSON, parsed and then checked against `schema`. */
export function jsonColumn<Schema extends z.ZodType>(schema: Schema) {
  return z
    .string()
    .transform((text, context): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/** An INTEGER column (SQLite's COUNT and SUM come back as integers too). */
export const integerColumn = z.number().int();
