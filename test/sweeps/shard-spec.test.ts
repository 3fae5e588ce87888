import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseShardSpec as parseRolloutSpec } from '../../lib/rollout/shard-spec.ts';
import { registerCheckpoint } from '../../lib/registry/register-checkpoint.ts';
import { registerSuite, registerSuiteFromFolder } from '../../lib/registry/register-suite.ts';
import { registryKeys } from '../../lib/registry/record-keys.ts';
import { readShardSpec } from '../../lib/sweeps/shard-spec.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { sampleTask } from './support/scripted-rollout.ts';
import { openSweepFixture, type SweepFixture } from './support/sweep-fixture.ts';

let fx: SweepFixture;
let dir: string | undefined;
afterEach(() => {
  fx?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the shard spec and the rollout job', () => {
  it("is a valid spec of the rollout job's own schema, for every task source and both serving kinds", async () => {
    fx = openSweepFixture({ settings: { shardMaxTasks: 10, tasksPerChild: 5 } });
    await registerCheckpoint(fx.ports, { id: 'coder-7b:step-100', model: 'coder-7b', serving: { kind: 'endpoint', model: 'openai:coder-7b@http://10.0.0.5:8000/v1' }, sweep: false });
    await registerCheckpoint(fx.ports, { id: 'coder-7b:step-200', model: 'coder-7b-rl', artifactKey: 'checkpoints/step-200/', serving: { kind: 'vllm', args: ['--max-model-len', '32768'], port: 8123, gpus: 2 }, sweep: false });
    // A forged suite: task records with their task blob (`taskKey`), as lib/forge/forge-records.ts stores them.
    const forged = ['f1', 'f2', 'f3'];
    for (const id of forged) {
      const key = `tasks/forge-py/${id}/task.json`;
      await fx.ports.blobs.put(key, JSON.stringify(sampleTask('forge-py', id)));
      await fx.ports.records.put({ ...registryKeys.task('forge-py', id), kind: 'forge-task', taskKey: key });
    }
    // A task that stopped certifying is retired by the forge: it takes no part in a sweep.
    await fx.ports.blobs.put('tasks/forge-py/f4/task.json', JSON.stringify(sampleTask('forge-py', 'f4')));
    await fx.ports.records.put({ ...registryKeys.task('forge-py', 'f4'), kind: 'forge-task', taskKey: 'tasks/forge-py/f4/task.json', status: 'retired' });
    await registerSuite(fx.ports, { id: 'forge-py', visibility: 'private', owner: 'forge', tasks: { kind: 'records' }, taskIds: [...forged, 'f4'] });
    // A folder suite, as `flywheel eval run --suite` loads it.
    dir = mkdtempSync(join(tmpdir(), 'flywheel-shard-spec-'));
    mkdirSync(join(dir, 'repo'));
    writeFileSync(join(dir, 'add.json'), JSON.stringify({ ...sampleTask('smoke', 'calc/add'), repo: { kind: 'local', path: 'repo' } }));
    await registerSuiteFromFolder(fx.ports, dir, { id: 'smoke', visibility: 'public', owner: 'evals' });
    // A blob suite.
    await fx.ports.blobs.put('suites/swe-lite/v1/a.json', JSON.stringify(sampleTask('swe-lite', 'a')));
    await registerSuite(fx.ports, { id: 'swe-lite', visibility: 'public', owner: 'evals', tasks: { kind: 'blobs', prefix: 'suites/swe-lite/v1/' }, taskIds: ['a'] });

    const steps = sweepStepHandlers({ settings: fx.settings });
    await steps['validate-sweep'](fx.ports, { sweepId: 'spec-1', trigger: 'manual', requestedAt: '2026-12-02T10:00:00Z', checkpoints: ['coder-7b:step-100', 'coder-7b:step-200'], modes: ['strict'] });
    const plan = await steps['plan-shards'](fx.ports, { sweepId: 'spec-1' });
    expect(plan.shardCount).toBe(6);
    for (const ref of plan.shards) {
      const bytes = (await fx.ports.blobs.get(ref.shardKey))!;
      const mine = await readShardSpec(fx.ports.blobs, ref.shardKey);
      const theirs = parseRolloutSpec(JSON.parse(new TextDecoder().decode(bytes)), ref.shardKey);
      expect(theirs).toMatchObject({ runId: mine.runId, suite: ref.suite, taskKeys: mine.taskKeys, checkpoint: ref.checkpoint, mode: 'strict', attempts: 1, shardCount: ref.arraySize, outputPrefix: mine.outputPrefix });
      expect(theirs.model).toBe(mine.model);
      // The rollout job keeps the port (zod would strip a field its schema lacks); the job asks Batch for the GPUs.
      expect(theirs.vllm).toEqual(mine.vllm);
      expect(ref.gpus).toBe(ref.checkpoint === 'coder-7b:step-200' ? 2 : 1);
      for (const key of mine.taskKeys) expect(await fx.ports.blobs.get(key), key).toBeDefined();
    }
    const byKey = Object.fromEntries(await Promise.all(plan.shards.map(async (s) => [`${s.checkpoint} ${s.suite}`, await readShardSpec(fx.ports.blobs, s.shardKey)] as const)));
    expect(byKey['coder-7b:step-100 forge-py']!.taskKeys).toEqual(['tasks/forge-py/f1/task.json', 'tasks/forge-py/f2/task.json', 'tasks/forge-py/f3/task.json']);
    // Run ids are what the rollout job accepts: the checkpoint's ':' replaced, a hash keeps ids apart.
    expect(byKey['coder-7b:step-100 forge-py']!.runId).toMatch(/^sweep\.spec-1\.coder-7b_step-100-[0-9a-f]{6}\.forge-py\.strict\.0$/);
    // The folder task is copied with its repository path made absolute.
    const smoke = byKey['coder-7b:step-100 smoke']!;
    const copied = JSON.parse(new TextDecoder().decode((await fx.ports.blobs.get(smoke.taskKeys[0]!))!));
    expect(copied.repo).toEqual({ kind: 'local', path: join(dir, 'repo') });
    expect(byKey['coder-7b:step-100 swe-lite']!.taskKeys).toEqual(['suites/swe-lite/v1/a.json']);
    // The vLLM-served checkpoint: no model spec, a serve command for the job to run beside the harness.
    const v = byKey['coder-7b:step-200 forge-py']!;
    expect(v.model).toBeUndefined();
    expect(v.vllm).toEqual({ servedModelName: 'coder-7b:step-200', port: 8123, command: 'vllm serve "$FLYWHEEL_CHECKPOINT_DIR" --port "$FLYWHEEL_VLLM_PORT" --served-model-name coder-7b:step-200 --max-model-len 32768' });
    expect(v.artifactKey).toBe('checkpoints/step-200/');
  });

  it('names the tasks a records suite lacks', async () => {
    fx = openSweepFixture();
    await fx.seed({ checkpoints: 1, suites: 0, tasks: 0 });
    await registerSuite(fx.ports, { id: 'ghosts', visibility: 'private', owner: 'forge', tasks: { kind: 'records' }, taskIds: ['g1', 'g2'] });
    const steps = sweepStepHandlers({ settings: fx.settings });
    await steps['validate-sweep'](fx.ports, { sweepId: 'spec-2', trigger: 'manual', requestedAt: '2026-12-02T10:00:00Z' });
    await expect(steps['plan-shards'](fx.ports, { sweepId: 'spec-2' })).rejects.toThrow(/no task record \(with taskKey or task\) for g1, g2/);
  });
});
