/**
 * `flywheel eval run --jobs` over a suite whose tasks name environment images: one job per image group
 * (`runEvalOnJobsPerImage`), each running only its tasks of the folder (`taskIds` in its spec) under its image, the
 * results summarized over every group as one run; a suite without images is the one job it always was. And the
 * rollout job's side: `taskIds` selects a folder's tasks before the image check.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { imageGroupRunId, runEvalOnJobsPerImage } from '../../lib/rollout/run-eval-on-jobs.ts';
import { runRolloutShard } from '../../lib/rollout/run-rollout-shard.ts';
import { parseShardSpec, type ShardSpecInput } from '../../lib/rollout/shard-spec.ts';
import { openLocalPorts, type LocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { evalAttemptId } from '../../lib/harness/attempt/attempt-record.ts';
import { attemptSortKey, evalPartition } from '../../lib/harness/attempt/record-keys.ts';
import { shardTasks } from '../../lib/harness/eval/shard-tasks.ts';
import { ModelUnavailableError } from '../../lib/models/model-errors.ts';
import type { JobDescription, JobSubmission, JobsPort } from '../../lib/ports/jobs.ts';
import type { ModelsPort } from '../../lib/ports/models.ts';
import { parseTask } from '../../lib/harness/task/task-schema.ts';

const DJANGO = 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest';
const SYMPY = 'swebench/sweb.eval.x86_64.sympy_1776_sympy-20590:latest';

let root: string;
let ports: LocalPorts;
afterEach(() => {
  ports?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const task = (id: string, image?: string) =>
  parseTask({ schemaVersion: 1, id, suite: 'mixed', split: 'held-out', visibility: 'private', repo: { kind: 'local', path: 'repo' }, instruction: `fix ${id}`, testCommand: 'true', failToPass: ['t'], ...(image ? { environment: { image } } : {}) });

/** A suite folder: t0–t2 no image, t3, t4 DJANGO, t5 SYMPY. */
function makeSuite(): { suiteDir: string; tasks: Array<{ task: ReturnType<typeof task> }> } {
  const suiteDir = join(root, 'suite');
  mkdirSync(join(suiteDir, 'repo'), { recursive: true });
  const tasks = ['t0', 't1', 't2', 't3', 't4', 't5'].map((id, i) => task(id, i < 3 ? undefined : i < 5 ? DJANGO : SYMPY));
  for (const t of tasks) writeFileSync(join(suiteDir, `${t.id}.json`), JSON.stringify(t));
  return { suiteDir, tasks: tasks.map((t) => ({ task: t })) };
}

/**
 * A jobs port whose jobs "run" at once: each child of a submitted job writes a passed attempt record for each task
 * of its slice, the tasks being the spec's `taskIds` (else every task of the suite), as the rollout job would.
 */
function scriptedJobs(allTaskIds: string[]): JobsPort & { submitted: JobSubmission[] } {
  const submitted: JobSubmission[] = [];
  const jobs = new Map<string, JobDescription>();
  return {
    submitted,
    async submit(s) {
      const existing = [...jobs.values()].find((j) => j.name === `${s.name}#${s.idempotencyToken}`);
      if (existing) return { jobId: existing.jobId };
      submitted.push(s);
      const spec = JSON.parse(new TextDecoder().decode((await ports.blobs.get(s.environment!.FLYWHEEL_SHARD_KEY!))!)) as ShardSpecInput;
      const ids = spec.taskIds ?? allTaskIds;
      const count = Number(s.environment!.FLYWHEEL_SHARD_COUNT);
      for (let child = 0; child < count; child++) {
        const runId = `${spec.runId}.shard-${child}`;
        for (const { id } of shardTasks(ids.map((id) => ({ id })), child, count)) {
          const usage = { promptTokens: 1, completionTokens: 1, cachedTokens: 0 };
          await ports.records.put({
            pk: evalPartition(runId), sk: attemptSortKey(id, spec.mode, 0), kind: 'eval-attempt', runId, attemptId: evalAttemptId(runId, id, spec.mode, 0), taskId: id, suite: 'mixed', mode: spec.mode, n: 0,
            status: 'passed', usage, usageAllTries: usage, turns: 1, durationMs: 0, model: 'scripted', tries: 1, history: [], startedAt: new Date().toISOString(), finishedAt: new Date().toISOString(),
          });
        }
      }
      const jobId = `job-${jobs.size}`;
      jobs.set(jobId, { jobId, name: `${s.name}#${s.idempotencyToken}`, definition: s.definition, category: s.category, pool: s.pool, status: 'SUCCEEDED', createdAt: Date.now() + 1, ...(s.image ? { image: s.image } : {}) });
      return { jobId };
    },
    describe: async (id) => jobs.get(id)!,
    children: async () => [],
    logs: async () => ({ lines: [] }),
    cancel: async () => {},
    list: async () => [...jobs.values()],
  };
}

const common = { model: 'openai:m@http://127.0.0.1:9/v1', modelId: 'm', mode: 'strict' as const, attempts: 1, concurrency: 1, maxTries: 1, retryDelayMs: 0, pollMs: 1 };

describe('runEvalOnJobsPerImage', () => {
  it('one job per image group, each with only its tasks, under its image; one summary over all', async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-env-jobs-'));
    ports = openLocalPorts(join(root, 'data'));
    const { suiteDir, tasks } = makeSuite();
    const jobs = scriptedJobs(tasks.map((t) => t.task.id));
    const { results, jobs: ran } = await runEvalOnJobsPerImage({ ...common, runId: 'r1', suiteDir, tasks, shards: 2, ports, jobs });
    expect(ran.map((r) => [r.runId, r.image ?? null])).toEqual([
      ['r1', null],
      [imageGroupRunId('r1', DJANGO), DJANGO],
      [imageGroupRunId('r1', SYMPY), SYMPY],
    ]);
    expect(imageGroupRunId('r1', DJANGO)).toMatch(/^r1\.env-[0-9a-f]{12}$/);
    // The groups' jobs are submitted at once, in any order.
    const byImage = (a: JobSubmission, b: JobSubmission) => (a.image ?? '').localeCompare(b.image ?? '');
    expect([...jobs.submitted].sort(byImage).map((s) => [s.image ?? null, s.arraySize ?? 1, s.definition])).toEqual([
      [null, 2, 'rollout'],
      [DJANGO, 2, 'rollout'],
      [SYMPY, 1, 'rollout'], // at most one child per task
    ]);
    // Job names are Batch names (the image group's run id has a dot).
    for (const s of jobs.submitted) expect(s.name).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]*$/);
    const specs = await Promise.all(ran.map(async (r) => parseShardSpec(JSON.parse(new TextDecoder().decode((await ports.blobs.get(`evals/${r.runId}/shard-spec.json`))!)), r.runId)));
    expect(specs.map((s) => [s.taskIds, s.environmentImage ?? null])).toEqual([
      [['t0', 't1', 't2'], null],
      [['t3', 't4'], DJANGO],
      [['t5'], SYMPY],
    ]);
    expect(results).toMatchObject({ runId: 'r1', tasks: 6, counts: { passed: 6, failed: 0 } });
    expect(results.perTask.map((t) => t.taskId).sort()).toEqual(['t0', 't1', 't2', 't3', 't4', 't5']);

    // Resuming the same run id with the same suite asks nothing new of the spec (no refusal).
    await expect(runEvalOnJobsPerImage({ ...common, runId: 'r1', suiteDir, tasks, shards: 2, ports, jobs })).resolves.toMatchObject({ results: { tasks: 6 } });
  });

  it('a suite without images is the one job of the run id it always was, its spec unchanged (no taskIds)', async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-env-jobs-'));
    ports = openLocalPorts(join(root, 'data'));
    const { suiteDir, tasks } = makeSuite();
    const plain = tasks.slice(0, 3);
    const jobs = scriptedJobs(plain.map((t) => t.task.id));
    const { results, jobs: ran } = await runEvalOnJobsPerImage({ ...common, runId: 'r2', suiteDir, tasks: plain, shards: 2, ports, jobs });
    expect(ran.map((r) => r.runId)).toEqual(['r2']);
    expect(jobs.submitted).toHaveLength(1);
    expect(jobs.submitted[0]).toMatchObject({ name: 'eval-r2', arraySize: 2 });
    expect(jobs.submitted[0]!.image).toBeUndefined();
    const spec = JSON.parse(new TextDecoder().decode((await ports.blobs.get('evals/r2/shard-spec.json'))!)) as ShardSpecInput;
    expect(spec.taskIds).toBeUndefined();
    expect(spec.environmentImage).toBeUndefined();
    expect(results).toMatchObject({ tasks: 3, counts: { passed: 3 } });
  });
});

describe('the rollout job reads taskIds of a folder suite', () => {
  const down: ModelsPort = {
    id: 'openai:down@http://127.0.0.1:9/v1',
    chat: async () => {
      throw new ModelUnavailableError('down', 1);
    },
    embed: async () => {
      throw new ModelUnavailableError('down', 1);
    },
  };
  const noSandbox = {
    open: async () => {
      throw new Error('no sandbox in this test');
    },
  };

  it('runs only the named tasks (so an image group passes the image check), and refuses an id the folder lacks', async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-env-jobs-'));
    ports = openLocalPorts(join(root, 'data'));
    const { suiteDir } = makeSuite();
    const base = { schemaVersion: 1, runId: 'g1', suiteDir, mode: 'strict', attempts: 1, maxTries: 1, retryDelayMs: 0, outputPrefix: 'evals/g1', environmentImage: DJANGO };
    const run = (spec: object) => runRolloutShard({ spec: parseShardSpec(spec, 'test'), shardIndex: 0, shardCount: 1, ports, model: down, provider: noSandbox, workDir: join(root, 'work') });
    // Without taskIds every task of the folder is the job's: those of other images are refused.
    await expect(run(base)).rejects.toThrow(/environmentImage is .*django.* t0 \(no image\)/);
    const { result } = await run({ ...base, taskIds: ['t3', 't4'] });
    expect(result.taskIds).toEqual(['t3', 't4']);
    await expect(run({ ...base, taskIds: ['t3', 'nope'] })).rejects.toThrow(/taskIds name task the suite does not have: nope/);
  });
});
