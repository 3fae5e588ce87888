/**
 * A sweep over tasks that name environment images (`task.environment.image`): plan-shards cuts each checkpoint ×
 * suite × mode per image group, the shards of an image carry it in their spec and the job definition for it in their
 * ShardRef (got once per image from `imageDefinitions`), the shards without one keep the ids they always had, and the
 * cell's result counts every group.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parseShardSpec as parseRolloutSpec } from '../../lib/rollout/shard-spec.ts';
import { listResults } from '../../lib/registry/list-results.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { registerSuite } from '../../lib/registry/register-suite.ts';
import { MAX_PLAN_STATE_BYTES } from '../../lib/sweeps/plan-shards.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { localImageDefinitions, localSweepArns } from '../../lib/sweeps/local/local-sweep-workflow.ts';
import type { ImageJobDefinitions, SweepExecutionInput } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { driveSweep } from './support/drive-sweep.ts';
import { rateScript, sampleTask } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
afterEach(() => fx?.close());

const DJANGO = 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest';
const SYMPY = 'swebench/sweb.eval.x86_64.sympy_1776_sympy-20590:latest';
const input = (sweepId: string): SweepExecutionInput => ({ sweepId, trigger: 'manual', requestedAt: '2026-12-02T10:05:00.000Z', modes: ['strict', 'lenient'] });
const ids = (n: number) => Array.from({ length: n }, (_, t) => `t${String(t).padStart(3, '0')}`);

/** Suite `mixed`: t000–t004 name no image, t005–t007 DJANGO, t008 SYMPY, t009 DJANGO (records holding the task JSON). */
async function seedMixed(fixture: SweepFixture): Promise<void> {
  const image = (t: number) => (t >= 5 && t <= 7) || t === 9 ? DJANGO : t === 8 ? SYMPY : undefined;
  await fixture.ports.records.putMany(
    ids(10).map((id, t) => ({ ...registryKeys.task('mixed', id), kind: 'forge-task', task: { ...sampleTask('mixed', id), ...(image(t) ? { environment: { image: image(t)! } } : {}) } })),
  );
  await registerSuite(fixture.ports, { id: 'mixed', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds: ids(10) });
}

/** A resolver like the AWS one (an ARN per image), counting its calls. */
function fakeDefinitions(): ImageJobDefinitions & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    forImage: async (image) => {
      calls.push(image);
      return `arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-rollout-env-${image === DJANGO ? 'd' : 's'}:1`;
    },
  };
}

describe('plan-shards with environment images', () => {
  it('cuts each cell per image group: the ids of the shards without an image unchanged, images after them with their job definition', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 3, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    await seedMixed(fx);
    const definitions = fakeDefinitions();
    const ports = { ...fx.ports, imageDefinitions: definitions };
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](ports, input('img-1'));
    const plan = await steps['plan-shards'](ports, { sweepId: 'img-1' });
    // Per mode: no image 5 tasks → 2 shards (3 + 2), DJANGO 4 → 2 (3 + 1), SYMPY 1 → 1.
    expect(plan.shardCount).toBe(10);
    const strict = plan.shards.filter((s) => s.mode === 'strict');
    expect(strict.map((s) => [s.shardId, s.jobDefinition ?? null])).toEqual([
      ['c0-s0-strict-0', null],
      ['c0-s0-strict-1', null],
      ['c0-s0-strict-2', 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-rollout-env-d:1'],
      ['c0-s0-strict-3', 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-rollout-env-d:1'],
      ['c0-s0-strict-4', 'arn:aws:batch:eu-west-1:123456789012:job-definition/flywheel-dev-rollout-env-s:1'],
    ]);
    // A shard without an image is exactly what it always was (no jobDefinition key: the Map's plain submit).
    expect(strict[0]).toEqual({ shardId: 'c0-s0-strict-0', shardKey: 'sweeps/img-1/shards/c0-s0-strict-0.json', checkpoint: 'ck-0', suite: 'mixed', mode: 'strict', arraySize: 2, gpus: 1 });
    // Each image's definition is asked for once, whatever the number of its shards, checkpoints and modes.
    expect(definitions.calls.sort()).toEqual([DJANGO, SYMPY]);

    const specs = await Promise.all(strict.map((s) => readShardSpec(fx.ports.blobs, s.shardKey)));
    expect(specs.map((s) => [s.taskIds, s.environmentImage ?? null, s.runId])).toEqual([
      [['t000', 't001', 't002'], null, 'sweep.img-1.ck-0.mixed.strict.0'],
      [['t003', 't004'], null, 'sweep.img-1.ck-0.mixed.strict.1'],
      [['t005', 't006', 't007'], DJANGO, 'sweep.img-1.ck-0.mixed.strict.2'],
      [['t009'], DJANGO, 'sweep.img-1.ck-0.mixed.strict.3'],
      [['t008'], SYMPY, 'sweep.img-1.ck-0.mixed.strict.4'],
    ]);
    expect(specs.map((s) => s.shardIndex)).toEqual([0, 1, 2, 3, 4]);
    // The rollout job's own schema reads the image (its runRolloutShard refuses a task naming another).
    const bytes = (await fx.ports.blobs.get(strict[2]!.shardKey))!;
    expect(parseRolloutSpec(JSON.parse(new TextDecoder().decode(bytes)), 'spec').environmentImage).toBe(DJANGO);
    // A replay answers the same plan.
    expect(await steps['plan-shards'](ports, { sweepId: 'img-1' })).toEqual(plan);
  });

  it('a suite without images is cut exactly as without this feature, and needs no job definitions', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 3, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 1, tasks: 7 });
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](fx.ports, input('plain-1'));
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'plain-1' });
    expect(plan.shards.map((s) => s.shardId)).toEqual(['c0-s0-strict-0', 'c0-s0-strict-1', 'c0-s0-strict-2', 'c0-s0-lenient-0', 'c0-s0-lenient-1', 'c0-s0-lenient-2']);
    expect(plan.shards.some((s) => 'jobDefinition' in s)).toBe(false);
  });

  it('refuses to plan image shards without job definitions of images (they would run in the rollout image)', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 3 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    await seedMixed(fx);
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](fx.ports, input('img-2'));
    await expect(steps['plan-shards'](fx.ports, { sweepId: 'img-2' })).rejects.toMatchObject({ name: 'Flywheel.ConfigurationError', message: expect.stringContaining(DJANGO) });
  });

  it('reads the image of tasks that live in blobs (forged tasks, blob suites)', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 10 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    for (const id of ['a', 'b']) {
      await fx.ports.blobs.put(`suites/swe/v1/${id}.json`, JSON.stringify({ ...sampleTask('swe', id), ...(id === 'b' ? { environment: { image: SYMPY } } : {}) }));
    }
    await registerSuite(fx.ports, { id: 'swe', visibility: 'public', owner: 'evals', tasks: { kind: 'blobs', prefix: 'suites/swe/v1/' }, taskIds: ['a', 'b'] });
    const ports = { ...fx.ports, imageDefinitions: localImageDefinitions() };
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](ports, { ...input('blob-1'), modes: ['strict'] });
    const plan = await steps['plan-shards'](ports, { sweepId: 'blob-1' });
    // Locally the rollout definition runs every image (the local jobs driver runs plain processes).
    expect(plan.shards.map((s) => [s.shardId, s.jobDefinition ?? null])).toEqual([
      ['c0-s0-strict-0', null],
      ['c0-s0-strict-1', localSweepArns().rolloutJobDefinition],
    ]);
    expect((await readShardSpec(fx.ports.blobs, plan.shards[1]!.shardKey)).environmentImage).toBe(SYMPY);
  });

  it('the cell counts every image group: one result per checkpoint × suite × mode over all its tasks', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 3, tasksPerChild: 2 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    await seedMixed(fx);
    const ports = { ...fx.ports, imageDefinitions: fakeDefinitions() };
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    const { notice } = await driveSweep(steps, ports, input('img-3'), { script: rateScript(() => 0.5) });
    expect(notice).toEqual({ sweepId: 'img-3', status: 'succeeded', succeededShards: 10, failedShards: 0 });
    const { items } = await listResults(fx.ports, { sweep: 'img-3' });
    expect(items.map((r) => [r.mode, r.n, r.tasks, r.shards, r.shardsAggregated])).toEqual(
      expect.arrayContaining([
        ['strict', 10, 10, 5, 5],
        ['lenient', 10, 10, 5, 5],
      ]),
    );
  });

  it('refuses a plan over the byte budget of one state (image shards carry their job definition)', async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 1 } });
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    // 130 tasks of 130 images (per-instance images, as SWE-bench's), 130 shards each carrying a 2 KB definition.
    await fx.ports.records.putMany(ids(130).map((id) => ({ ...registryKeys.task('many', id), kind: 'forge-task', task: { ...sampleTask('many', id), environment: { image: `acme/env:${id}` } } })));
    await registerSuite(fx.ports, { id: 'many', visibility: 'public', owner: 'evals', tasks: { kind: 'records' }, taskIds: ids(130) });
    const ports = { ...fx.ports, imageDefinitions: { forImage: async (image: string) => `${image}-${'x'.repeat(2000)}` } };
    const steps = sweepStepHandlers({ settings: fx.settings, notify: { log: () => {} } });
    await steps['validate-sweep'](ports, { ...input('big-1'), modes: ['strict'] });
    await expect(steps['plan-shards'](ports, { sweepId: 'big-1' })).rejects.toThrow(new RegExp(`over the ${MAX_PLAN_STATE_BYTES} a Step Functions state can carry`));
    expect(MAX_PLAN_STATE_BYTES).toBeLessThan(256 * 1024);
  });
});
