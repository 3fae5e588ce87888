import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../lib/errors.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { getSweep } from '../../lib/sweeps/sweep-record.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());
const at = '2026-12-02T10:05:00.000Z';

async function rejection(p: Promise<unknown>): Promise<ValidationError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ValidationError);
  return e as ValidationError;
}

describe('validate-sweep', () => {
  it('names every unknown or retired checkpoint and suite, and bad modes and attempts, in one Flywheel.ValidationError', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 3 });
    const retired = registryKeys.suite('suite-0');
    await fx.ports.records.put({ ...(await fx.ports.records.get(retired.pk, retired.sk))!, status: 'retired' });
    const steps = sweepStepHandlers({ settings: fx.settings });
    const e = await rejection(
      steps['validate-sweep'](fx.ports, {
        sweepId: 's1',
        trigger: 'manual',
        requestedAt: at,
        checkpoints: ['ck-0', 'nope'],
        suites: ['suite-0', 'missing'],
        attemptsPerTask: 200,
      }),
    );
    expect(e.name).toBe('Flywheel.ValidationError');
    expect(e.issues).toEqual(expect.arrayContaining([{ path: 'attemptsPerTask', message: expect.stringContaining('100') }]));
    const e2 = await rejection(steps['validate-sweep'](fx.ports, { sweepId: 's1', trigger: 'manual', requestedAt: at, checkpoints: ['ck-0', 'nope'], suites: ['suite-0', 'missing'] }));
    expect(e2.issues).toEqual([
      { path: 'checkpoints[1]', message: 'no checkpoint nope is registered' },
      { path: 'suites[0]', message: 'suite suite-0 is retired' },
      { path: 'suites[1]', message: 'no suite missing is registered' },
    ]);
    expect(e2.message).toContain('checkpoints[1]: no checkpoint nope is registered');
    const e3 = await rejection(steps['validate-sweep'](fx.ports, { sweepId: 'bad id', trigger: 'manual', requestedAt: at, modes: ['strict', 'loose' as never] }));
    expect(e3.issues.map((i) => i.path)).toEqual(expect.arrayContaining(['sweepId', 'modes[1]']));
    // Nothing was recorded for the refused sweep.
    expect(await fx.ports.records.get('SWEEP#s1', 'SWEEP')).toBeUndefined();
  });

  it('without a selection: the newest active checkpoint of each model, every active suite, both modes', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 2, suites: 2, tasks: 3 });
    fx.tick(1000);
    await registerCheckpoint(fx.ports, { id: 'ck-0b', model: 'm0', parent: 'ck-0', serving: { kind: 'vllm', args: [] }, artifactKey: 'weights/ck-0b/', sweep: false });
    const steps = sweepStepHandlers({ settings: fx.settings });
    await steps['validate-sweep'](fx.ports, { sweepId: 's1', trigger: 'schedule', requestedAt: at });
    const sweep = await getSweep(fx.ports.records, 's1');
    expect(sweep.checkpoints).toEqual(['ck-0b', 'ck-1']);
    expect(sweep.suites).toEqual([{ id: 'suite-0', version: 1 }, { id: 'suite-1', version: 1 }]);
    expect(sweep.modes).toEqual(['strict', 'lenient']);
    expect(sweep.attemptsPerTask).toBe(fx.settings.attemptsPerTask);
    // A re-run keeps the recorded selection, even after a newer checkpoint arrives.
    fx.tick(1000);
    await registerCheckpoint(fx.ports, { id: 'ck-1b', model: 'm1', serving: { kind: 'endpoint', model: 'bedrock:x' }, sweep: false });
    await steps['validate-sweep'](fx.ports, { sweepId: 's1', trigger: 'schedule', requestedAt: at });
    expect((await getSweep(fx.ports.records, 's1')).checkpoints).toEqual(['ck-0b', 'ck-1']);
  });

  it('refuses a sweep whose plan would exceed the shard limit, and an empty registry', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 1 } });
    const steps = sweepStepHandlers({ settings: fx.settings });
    const empty = await rejection(steps['validate-sweep'](fx.ports, { sweepId: 's0', trigger: 'schedule', requestedAt: at }));
    expect(empty.issues).toEqual([
      { path: 'checkpoints', message: 'none given and no active checkpoint is registered' },
      { path: 'suites', message: 'none given and no suite is active' },
    ]);
    await fx.seed({ checkpoints: 2, suites: 1, tasks: 300 });
    const big = await rejection(steps['validate-sweep'](fx.ports, { sweepId: 's1', trigger: 'manual', requestedAt: at }));
    expect(big.issues[0]!.message).toContain('1200 shards; at most 1000');
  });
});
