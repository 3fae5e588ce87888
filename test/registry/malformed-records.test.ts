/**
 * A stored registry record that does not match its kind's schema fails where it is read, as a MalformedRecordError
 * naming the record and the field, never as a wrong value further on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { getCheckpoint } from '../../lib/registry/get-checkpoint.ts';
import { getSuiteDetail } from '../../lib/registry/get-suite-detail.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { MalformedRecordError } from '../../lib/shared/record-codec.ts';
import { openSweepFixture, type SweepFixture } from '../sweeps/support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

describe('malformed registry records', () => {
  it('a checkpoint whose registeredAt is not a time fails the read, naming the field', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 2 });
    const key = registryKeys.checkpoint('ck-0');
    await fx.ports.records.put({ ...(await fx.ports.records.get(key.pk, key.sk))!, registeredAt: 1_700_000_000 });
    const read = getCheckpoint(fx.ports.records, 'ck-0');
    await expect(read).rejects.toBeInstanceOf(MalformedRecordError);
    await expect(read).rejects.toMatchObject({ name: 'Flywheel.MalformedRecord', pk: key.pk, sk: key.sk, field: 'registeredAt' });
  });

  it("a suite's best-score point with a score that is not a number fails the suite detail, naming the field", async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 2 });
    const key = registryKeys.suiteBestPoint('suite-0', '2026-12-02T10:00:00.000Z', 's1');
    await fx.ports.records.put({ ...key, kind: 'suite-best', suite: 'suite-0', suiteVersion: 1, score: 'high', checkpoint: 'ck-0', sweepId: 's1', at: '2026-12-02T10:00:00.000Z' });
    const read = getSuiteDetail(fx.ports, 'suite-0', {});
    await expect(read).rejects.toMatchObject({ pk: key.pk, sk: key.sk, field: 'score', message: expect.stringContaining('field "score"') });
  });
});
