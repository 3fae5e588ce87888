/**
 * Record items ⇄ API views: the stored items carry keys and bookkeeping (`pk`, `gsi1sk`, `kind`, per-task lists)
 * that the API does not show.
 */
import type { RecordItem } from '../ports/records.ts';
import type { Checkpoint, Result, Suite } from './schemas.ts';

const KEY_FIELDS = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'kind'] as const;

function strip(item: RecordItem, extra: readonly string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = { ...item };
  for (const k of [...KEY_FIELDS, ...extra]) delete out[k];
  return out;
}

export function toCheckpoint(item: RecordItem): Checkpoint {
  return strip(item) as unknown as Checkpoint;
}

/** The suite with its task ids (the API view leaves `taskIds` out: a suite may hold 100,000). */
/** The suite; its write counter (`revision`, `updateSuite`'s) stays inside the record. */
export function toSuite(item: RecordItem): Suite {
  return strip(item, ['revision']) as unknown as Suite;
}

export function suiteView(suite: Suite): Omit<Suite, 'taskIds'> {
  const { taskIds: _ids, ...view } = suite;
  return view;
}

/** Per-task tallies a cell row keeps for paired comparisons. */
export interface TaskTally {
  taskId: string;
  scored: number;
  passed: number;
}

export interface CellItem extends RecordItem, Result {
  kind: 'sweep-result';
  attemptsPerTask: number;
  /** Per-task tallies, inline while small; else in the blob `perTaskKey` (a large suite's list would not fit an item). */
  perTask?: TaskTally[];
  perTaskKey?: string;
}

export function toResult(item: RecordItem): Result {
  return strip(item, ['perTask', 'perTaskKey', 'attemptsPerTask']) as unknown as Result;
}
