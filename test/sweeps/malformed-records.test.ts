/**
 * A stored sweep record that does not match its kind's schema fails where it is read, as a MalformedRecordError
 * naming the record and the field, never as a wrong value further on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { getSweepReport } from '../../lib/sweeps/get-sweep-report.ts';
import { sweepKeys } from '../../lib/sweeps/record-keys.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

const sweep = {
  kind: 'sweep',
  sweepId: 's1',
  trigger: 'manual',
  requestedAt: '2026-12-02T10:00:00.000Z',
  checkpoints: ['ck-0'],
  suites: [{ id: 'suite-0', version: 1 }],
  modes: ['strict'],
  attemptsPerTask: 1,
  status: 'planned',
  validatedAt: '2026-12-02T10:00:01.000Z',
};

describe('malformed sweep records', () => {
  it('a sweep record whose attemptsPerTask is not a number fails the report, naming the field', async () => {
    fx = openSweepFixture();
    await fx.ports.records.put({ ...sweepKeys.sweep('s1'), ...sweep, attemptsPerTask: 'three' });
    const read = getSweepReport(fx.ports, 's1');
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', pk: 'SWEEP#s1', sk: 'SWEEP', field: 'attemptsPerTask' });
  });

  it("a cell whose per-task tallies hold a string fails the report, naming the field's path", async () => {
    fx = openSweepFixture();
    await fx.ports.records.put({ ...sweepKeys.sweep('s1'), ...sweep });
    const key = sweepKeys.cell('s1', 'ck-0', 'suite-0', 'strict');
    await fx.ports.records.put({
      ...key,
      kind: 'sweep-result',
      sweepId: 's1',
      checkpoint: 'ck-0',
      suite: 'suite-0',
      suiteVersion: 1,
      mode: 'strict',
      score: 0.5,
      n: 2,
      tasks: 2,
      attempts: 2,
      passes: 1,
      ungraded: 0,
      infrastructureErrors: 0,
      ci: { low: 0.1, high: 0.9 },
      shards: 1,
      shardsAggregated: 1,
      shardsFailed: 0,
      attemptsKeys: [],
      at: '2026-12-02T10:00:00.000Z',
      updatedAt: '2026-12-02T10:05:00.000Z',
      attemptsPerTask: 1,
      perTask: [{ taskId: 't1', scored: 1, passed: 1 }, { taskId: 't2', scored: 1, passed: 'no' }],
    });
    await expect(getSweepReport(fx.ports, 's1')).rejects.toMatchObject({ pk: key.pk, sk: key.sk, field: 'perTask.1.passed' });
  });
});
