import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupTasksByImage } from '../../../lib/rollout/environment-images.ts';
import { runRolloutShard } from '../../../lib/rollout/run-rollout-shard.ts';
import { parseShardSpec } from '../../../lib/rollout/shard-spec.ts';
import { openLocalPorts } from '../../../lib/drivers/local/local-ports.ts';
import type { ModelsPort } from '../../../lib/ports/models.ts';
import type { SandboxProvider } from '../../../lib/harness/sandbox/sandbox.ts';
import { makeCalcSuite } from '../eval/calc-suite.ts';
import { exportHarborTask, importHarborTask } from '../../../lib/harness/task/harbor-task.ts';
import { importSweBenchInstance, sweBenchImage } from '../../../lib/harness/task/swe-bench-task.ts';
import { parseTask, type TaskInput } from '../../../lib/harness/task/task-schema.ts';

const base: TaskInput = { schemaVersion: 1, id: 't/1', suite: 's', split: 'train', visibility: 'public', repo: { kind: 'local', path: '.' }, instruction: 'fix', testCommand: 'true', failToPass: ['a'] };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fw-task-env-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a task names its environment', () => {
  it('the schema takes an image and/or a Dockerfile, and refuses an empty or malformed one', () => {
    expect(parseTask({ ...base, environment: { image: 'ghcr.io/acme/env:1' } }).environment).toEqual({ image: 'ghcr.io/acme/env:1' });
    expect(parseTask({ ...base, environment: { dockerfile: 'environment/Dockerfile' } }).environment).toEqual({ dockerfile: 'environment/Dockerfile' });
    expect(parseTask(base).environment).toBeUndefined();
    expect(() => parseTask({ ...base, environment: {} })).toThrow(/environment: an image, a dockerfile, or both/);
    expect(() => parseTask({ ...base, environment: { image: 'x y; rm -rf /' } })).toThrow(/environment\.image: an image reference/);
  });

  it("Harbor: environment/Dockerfile and [environment].docker_image are read, and exported back", async () => {
    const folder = join(dir, 'hello');
    await mkdir(join(folder, 'environment'), { recursive: true });
    await writeFile(join(folder, 'instruction.md'), 'Say hello.\n');
    await writeFile(join(folder, 'task.toml'), 'version = "1.0"\n[environment]\ndocker_image = "ghcr.io/acme/hello:3"\n');
    await writeFile(join(folder, 'environment', 'Dockerfile'), 'FROM python:3.12-slim\nRUN pip install six==1.17.0\n');
    const task = await importHarborTask(folder);
    expect(task.environment).toEqual({ image: 'ghcr.io/acme/hello:3', dockerfile: join(folder, 'environment', 'Dockerfile') });
    const out = join(dir, 'exported');
    await exportHarborTask(task, out);
    expect(await readFile(join(out, 'environment', 'Dockerfile'), 'utf8')).toBe('FROM python:3.12-slim\nRUN pip install six==1.17.0\n');
    expect(await readFile(join(out, 'task.toml'), 'utf8')).toMatch(/docker_image = "ghcr\.io\/acme\/hello:3"/);
    expect((await importHarborTask(out)).environment).toEqual(task.environment);
    // A folder without a Dockerfile or image names no environment.
    const plain = join(dir, 'plain');
    await mkdir(join(plain, 'environment'), { recursive: true });
    await writeFile(join(plain, 'instruction.md'), 'x\n');
    await writeFile(join(plain, 'task.toml'), 'version = "1.0"\n');
    expect((await importHarborTask(plain)).environment).toBeUndefined();
  });

  it("SWE-bench: the instance's evaluation image, by SWE-bench's naming (__ as _1776_, lower case)", () => {
    expect(sweBenchImage('django__django-11099')).toBe('swebench/sweb.eval.x86_64.django_1776_django-11099:latest');
    expect(sweBenchImage('SWE-Gym__Repo-1', 'registry.example.com/{id}:v2')).toBe('registry.example.com/swe-gym_1776_repo-1:v2');
    const row = { instance_id: 'astropy__astropy-12907', repo: 'astropy/astropy', base_commit: 'd16bfe05a744909de4b27f5875fe0d4ed41ce607', problem_statement: 'p', FAIL_TO_PASS: ['a'] };
    expect(importSweBenchInstance(row).environment).toEqual({ image: 'swebench/sweb.eval.x86_64.astropy_1776_astropy-12907:latest' });
    expect(importSweBenchInstance(row, { image: false }).environment).toBeUndefined();
  });

  it('a suite splits by image for jobs: tasks without one first, then each image, order kept', () => {
    const t = (id: string, image?: string) => ({ task: parseTask({ ...base, id, ...(image ? { environment: { image } } : {}) }) });
    const groups = groupTasksByImage([t('a', 'img/b:1'), t('b'), t('c', 'img/a:1'), t('d', 'img/b:1'), t('e')]);
    expect(groups.map((g) => [g.image, g.tasks.map((x) => x.task.id)])).toEqual([
      [undefined, ['b', 'e']],
      ['img/a:1', ['c']],
      ['img/b:1', ['a', 'd']],
    ]);
  });

  it('a shard spec that runs in an image refuses tasks of another image before any attempt', async () => {
    const root = join(dir, 'shard');
    await mkdir(root, { recursive: true });
    const ports = openLocalPorts(join(root, 'data'));
    try {
      const { suiteDir } = makeCalcSuite(root, { environment: { image: 'ghcr.io/acme/calc:1' } });
      const spec = (image: string) => parseShardSpec({ schemaVersion: 1, runId: 'r1', suiteDir, mode: 'strict', attempts: 1, outputPrefix: 'out/r1', environmentImage: image }, 'test');
      const unused = new Proxy({}, { get: () => { throw new Error('no attempt may run'); } });
      const common = { shardIndex: 0, shardCount: 1, ports, model: unused as ModelsPort, provider: unused as SandboxProvider, workDir: join(root, 'work') };
      await expect(runRolloutShard({ ...common, spec: spec('ghcr.io/acme/other:2') })).rejects.toThrow(
        'shard spec environmentImage is ghcr.io/acme/other:2, but task calc/add (ghcr.io/acme/calc:1) names another',
      );
    } finally {
      ports.close();
    }
  });
});
