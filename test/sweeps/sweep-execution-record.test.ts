import { describe, expect, it } from 'vitest';
import { taskRecord } from '../../lib/registry/record-codecs.ts';
import { sweepExecutionRecord } from '../../lib/sweeps/record-codecs.ts';

describe('stored shapes are not request limits', () => {
  it('stores a resolved selection larger than a request may name (every active suite), for validate-sweep to judge', () => {
    const suites = Array.from({ length: 150 }, (_, i) => `suite-${i}`);
    const item = sweepExecutionRecord.encode({
      kind: 'sweep-execution',
      sweepId: 'nightly-1',
      input: { sweepId: 'nightly-1', trigger: 'schedule', suites, checkpoints: ['ck-1'], modes: ['strict'], requestedAt: '2026-12-03T00:00:00Z' },
    });
    expect(sweepExecutionRecord.decode(item).input.suites).toHaveLength(150);
  });

  it('reads a task record whose task is not an object, or whose taskKey is not a string, as having neither', () => {
    const decoded = taskRecord.decode({ pk: 'TASK#s#t', sk: 'TASK', suite: 's', taskId: 't', task: '{"id":"t"}', taskKey: 7 });
    expect(decoded.task).toBeUndefined();
    expect(decoded.taskKey).toBeUndefined();
    expect(taskRecord.decode({ pk: 'TASK#s#t', sk: 'TASK', task: { id: 't' }, taskKey: 'tasks/t.json' })).toMatchObject({ task: { id: 't' }, taskKey: 'tasks/t.json' });
  });
});
