import { describe, expect, it } from 'vitest';
import { shardTasks } from '../../../lib/harness/eval/shard-tasks.ts';

const suite = (ids: string[]) => ids.map((id) => ({ task: { id }, sourceDir: `/repos/${id}` }));

describe('shardTasks', () => {
  it('deals the tasks, sorted by id, round-robin: every task in exactly one shard, sizes within one', () => {
    const ids = Array.from({ length: 11 }, (_, i) => `t/${String(i).padStart(2, '0')}`);
    const tasks = suite([...ids].reverse());
    const shards = [0, 1, 2].map((i) => shardTasks(tasks, i, 3).map((t) => t.task.id));
    expect(shards[0]).toEqual(['t/00', 't/03', 't/06', 't/09']);
    expect(shards.flat().sort()).toEqual(ids);
    expect(shards.map((s) => s.length)).toEqual([4, 4, 3]);
  });

  it('does not depend on the order tasks come in, and keeps the items given', () => {
    const a = suite(['b', 'a', 'c', 'd']);
    const b = suite(['d', 'c', 'b', 'a']);
    expect(shardTasks(a, 1, 2).map((t) => t.task.id)).toEqual(shardTasks(b, 1, 2).map((t) => t.task.id));
    expect(shardTasks(a, 1, 2)[0]).toBe(a[0]);
    // Bare tasks work too.
    expect(shardTasks([{ id: 'y' }, { id: 'x' }], 0, 2)).toEqual([{ id: 'x' }]);
    // Bare ids (a sweep's taskIds) shard exactly as the tasks they name.
    expect(shardTasks(['c', 'a', 'b', 'd', 'e'], 1, 2)).toEqual(['b', 'd']);
  });

  it('refuses bad shard numbers and duplicate ids, naming them', () => {
    expect(() => shardTasks(suite(['a']), 2, 2)).toThrow(/shardIndex must be an integer in \[0, 1\] \(got 2\)/);
    expect(() => shardTasks(suite(['a']), 0, 0)).toThrow(/shardCount must be a positive integer/);
    expect(() => shardTasks(suite(['a', 'a']), 0, 1)).toThrow(/task id a appears twice/);
    expect(shardTasks(suite([]), 0, 4)).toEqual([]);
  });
});
