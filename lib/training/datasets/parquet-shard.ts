/**
 * A training shard as Parquet bytes (hyparquet-writer): one row per training sequence, the columns of `SHARD_COLUMNS`,
 * lists as Parquet LIST columns (an explicit schema: the writer cannot infer list element types, and an empty list
 * must still have one). pyarrow reads it as `list<int32>`, `list<float>`, `list<string>`, `list<bool>`.
 *
 * @example
 * await ports.blobs.put(datasetKeys('d1').shard(0), encodeShard(rows), { contentType: 'application/vnd.apache.parquet' });
 */
import { parquetWriteBuffer, type ColumnSource, type SchemaElement } from 'hyparquet-writer';
import { SHARD_COLUMNS } from '../schemas.ts';
import type { ShardRow } from './trajectory-rows.ts';

type Leaf = 'string' | 'int32' | 'float' | 'double' | 'bool';

const LEAF: Record<Leaf, Pick<SchemaElement, 'type' | 'converted_type'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  int32: { type: 'INT32' },
  float: { type: 'FLOAT' },
  double: { type: 'DOUBLE' },
  bool: { type: 'BOOLEAN' },
};

/** Column → how to read it from a row, and its Parquet type (a list of the leaf when `list`). */
const COLUMNS: Array<{ name: string; leaf: Leaf; list: boolean; value: (r: ShardRow) => unknown }> = [
  { name: SHARD_COLUMNS.sampleId, leaf: 'string', list: false, value: (r) => r.sampleId },
  { name: SHARD_COLUMNS.groupId, leaf: 'string', list: false, value: (r) => r.groupId },
  { name: SHARD_COLUMNS.taskId, leaf: 'string', list: false, value: (r) => r.taskId },
  { name: SHARD_COLUMNS.attemptId, leaf: 'string', list: false, value: (r) => r.attemptId },
  { name: SHARD_COLUMNS.policyCheckpoint, leaf: 'string', list: false, value: (r) => r.policyCheckpoint },
  { name: SHARD_COLUMNS.policyVersion, leaf: 'string', list: false, value: (r) => r.policyVersion },
  { name: SHARD_COLUMNS.inputIds, leaf: 'int32', list: true, value: (r) => r.inputIds },
  { name: SHARD_COLUMNS.lossMask, leaf: 'int32', list: true, value: (r) => r.lossMask },
  { name: SHARD_COLUMNS.behaviourLogprobs, leaf: 'float', list: true, value: (r) => r.behaviourLogprobs },
  { name: SHARD_COLUMNS.reward, leaf: 'double', list: false, value: (r) => r.reward },
  { name: SHARD_COLUMNS.hasTokenIds, leaf: 'bool', list: false, value: (r) => r.hasTokenIds },
  { name: SHARD_COLUMNS.spanStarts, leaf: 'int32', list: true, value: (r) => r.spans.map((s) => s.start) },
  { name: SHARD_COLUMNS.spanEnds, leaf: 'int32', list: true, value: (r) => r.spans.map((s) => s.end) },
  { name: SHARD_COLUMNS.spanDecisionIds, leaf: 'string', list: true, value: (r) => r.spans.map((s) => s.decisionId) },
  { name: SHARD_COLUMNS.spanHints, leaf: 'string', list: true, value: (r) => r.spans.map((s) => s.hint) },
  { name: SHARD_COLUMNS.spanVerified, leaf: 'bool', list: true, value: (r) => r.spans.map((s) => s.verified) },
];

/** The Parquet schema of a shard: every column required; lists with required elements (three-level LIST). */
function shardSchema(): SchemaElement[] {
  const schema: SchemaElement[] = [{ name: 'root', num_children: COLUMNS.length }];
  for (const c of COLUMNS) {
    if (!c.list) {
      schema.push({ name: c.name, repetition_type: 'REQUIRED', ...LEAF[c.leaf] });
      continue;
    }
    schema.push(
      { name: c.name, repetition_type: 'REQUIRED', converted_type: 'LIST', num_children: 1 },
      { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
      { name: 'element', repetition_type: 'REQUIRED', ...LEAF[c.leaf] },
    );
  }
  return schema;
}

/**
 * The shard's Parquet bytes (deterministic: the same rows give the same bytes).
 *
 * @example
 * const bytes = encodeShard(rows); // Uint8Array, readable by pyarrow.parquet.read_table
 */
export function encodeShard(rows: readonly ShardRow[]): Uint8Array {
  const columnData: ColumnSource[] = COLUMNS.map((c) => ({ name: c.name, data: rows.map(c.value) }));
  // No column statistics: nothing filters shards by value, and they cost a tenth of the build.
  return new Uint8Array(parquetWriteBuffer({ columnData, schema: shardSchema(), statistics: false, createdBy: 'flywheel dataset builder (hyparquet-writer)' }));
}

/** Tokens of a row (its sequence length); a text-only row has none. */
export function rowTokens(row: ShardRow): number {
  return row.inputIds.length;
}
