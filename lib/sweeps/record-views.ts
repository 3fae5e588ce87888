/** Sweep records ⇄ API views: a cell row carries bookkeeping (`kind`, per-task tallies) the API does not show. */
import type { Result } from '../registry/schemas.ts';
import type { CellRecord } from './record-codecs.ts';

/** The API's result row of a cell. */
export function toResult(cell: CellRecord): Result {
  const { kind: _kind, perTask: _perTask, perTaskKey: _perTaskKey, attemptsPerTask: _attemptsPerTask, ...result } = cell;
  return result;
}
