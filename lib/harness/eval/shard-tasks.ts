import { ValidationError } from '../../errors.ts';

/** Anything with a task id: a `SuiteTask` (`{ task: { id } }`), a bare task (`{ id }`), or the id itself. */
export type Shardable = { task: { id: string } } | { id: string } | string;

function idOf(item: Shardable): string {
  return typeof item === 'string' ? item : 'task' in item ? item.task.id : item.id;
}

/**
 * The tasks of one shard of a suite, for a job array (AWS Batch's `AWS_BATCH_JOB_ARRAY_INDEX` picks `shardIndex`).
 *
 * Deterministic and independent of input order: the tasks are sorted by id (code-unit order, not locale), then dealt
 * round-robin, so shard `i` of `n` holds the tasks at sorted positions `i, i + n, i + 2n, …`. Every task lands in
 * exactly one shard and shard sizes differ by at most one. Adding or removing a task can move others to another
 * shard; a resumed run is still correct because attempts are keyed by task id, not by shard.
 * Duplicate task ids are refused (they would be attempted twice under one key).
 *
 * @example
 * const mine = shardTasks(await loadSuite('suites/smoke'), Number(process.env.AWS_BATCH_JOB_ARRAY_INDEX ?? 0), 8);
 */
export function shardTasks<T extends Shardable>(tasks: readonly T[], shardIndex: number, shardCount: number): T[] {
  if (!Number.isInteger(shardCount) || shardCount < 1) {
    throw new ValidationError(`shardCount must be a positive integer (got ${shardCount})`, [{ path: 'shardCount', message: 'positive integer' }]);
  }
  if (!Number.isInteger(shardIndex) || shardIndex < 0 || shardIndex >= shardCount) {
    throw new ValidationError(`shardIndex must be an integer in [0, ${shardCount - 1}] (got ${shardIndex})`, [{ path: 'shardIndex', message: `0..${shardCount - 1}` }]);
  }
  const sorted = [...tasks].sort((a, b) => {
    const x = idOf(a);
    const y = idOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (let i = 1; i < sorted.length; i++) {
    if (idOf(sorted[i]!) === idOf(sorted[i - 1]!)) {
      throw new ValidationError(`task id ${idOf(sorted[i]!)} appears twice`, [{ path: 'tasks', message: 'duplicate id' }]);
    }
  }
  return sorted.filter((_, i) => i % shardCount === shardIndex);
}
