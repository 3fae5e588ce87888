/**
 * The slice of a suite that one shard (one child of a Batch array job) runs: item `i` goes to shard `i mod count`,
 * so shards differ in size by at most one and every item lands in exactly one shard. Deterministic for a given
 * order, so a retried child runs the same tasks (and resumes them).
 *
 * @example
 * shardTasks(['a', 'b', 'c', 'd', 'e'], 2, 1); // ['b', 'd']
 */
import { ValidationError } from '../errors.ts';

export function shardTasks<T>(items: readonly T[], shardCount: number, shardIndex: number): T[] {
  if (!Number.isInteger(shardCount) || shardCount < 1) throw new ValidationError(`shard count must be a positive integer (got ${shardCount})`, [{ path: 'shardCount', message: 'positive integer' }]);
  if (!Number.isInteger(shardIndex) || shardIndex < 0 || shardIndex >= shardCount) {
    throw new ValidationError(`shard index must be an integer in [0, ${shardCount}) (got ${shardIndex})`, [{ path: 'shardIndex', message: `0..${shardCount - 1}` }]);
  }
  return items.filter((_, i) => i % shardCount === shardIndex);
}
