/**
 * `npm run bench:sweep`: the orchestration overhead of a sweep and its AWS cost.
 *
 * Default size: 4 checkpoints × 3 suites × 2 modes × 50 tasks, 1 attempt per task (1,200 attempts), 50 tasks per
 * shard (24 shards), 10 tasks per array child (120 children). Attempts are scripted: they take no time and call no
 * model, so every second measured is orchestration, i.e. time beyond the attempts themselves.
 *
 * 1. steps: the sweep steps called directly over the local ports (validate, plan, aggregate × shards, compare,
 *    saturation, notify), per-step time and the DynamoDB/S3 requests they make (counted at the ports).
 * 2. runtime: the whole local sweep as `npm start` runs it: `POST /v1/sweeps`-equivalent `startSweep` → the synthesized
 *    state machine on aws-local-stepfunctions → a Batch array job per shard on the local jobs driver (one child
 *    process per array child, the GPU pool's local concurrency) → aggregation → report. Wall time from start to the
 *    execution's end, and the state transitions it took (Step Functions bills them).
 * 3. cost: docs/cost-model.md over the measured counts, with the attempt time and GPU price as parameters.
 *
 * Flags: --checkpoints 4 --suites 3 --tasks 50 --attempts 1 --shard-max-tasks 50 --tasks-per-child 10
 *        --gpu-concurrency <local stage> --attempt-seconds 300 --startup-seconds 180 --gpu-hourly 0.9776
 *        --instance g6.2xlarge --lambda-memory 512 --no-runtime (steps and cost only) --json
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { STAGES, type SweepSettings } from '../lib/config/stages.ts';
import { LocalJobs } from '../lib/drivers/local/local-jobs.ts';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { LocalWorkflows } from '../lib/drivers/local/local-workflows.ts';
import { openDatabase } from '../lib/drivers/local/sqlite-database.ts';
import { shardTasks } from '../lib/harness/eval/shard-tasks.ts';
import { registerCheckpoint } from '../lib/registry/register-checkpoint.ts';
import { registerSuite } from '../lib/registry/register-suite.ts';
import { DEFAULT_PRICES, estimateSweepCost } from '../lib/sweeps/estimate-sweep-cost.ts';
import { getSweepReport } from '../lib/sweeps/get-sweep-report.ts';
import { readShardSpec } from '../lib/sweeps/shard-spec.ts';
import { startSweep } from '../lib/sweeps/start-sweep.ts';
import { sweepStepHandlers } from '../lib/sweeps/sweep-step-handlers.ts';
import { localSweepWorkflow } from '../lib/sweeps/local/local-sweep-workflow.ts';
import { SWEEP_WORKFLOW } from '../lib/sweeps/workflow/sweep.asl.ts';
import type { ShardOutcome, SweepSteps, SweepStepPorts } from '../lib/sweeps/workflow/sweep-steps.ts';
import { registryKeys } from '../lib/registry/record-keys.ts';
import { runScriptedShard, rateScript, sampleTask } from '../test/sweeps/support/scripted-rollout.ts';
import { countingPorts, emptyCounts, type RequestCounts } from './support/counting-ports.ts';

const { values: f } = parseArgs({
  options: {
    checkpoints: { type: 'string', default: '4' },
    suites: { type: 'string', default: '3' },
    tasks: { type: 'string', default: '50' },
    attempts: { type: 'string', default: '1' },
    'shard-max-tasks': { type: 'string', default: '50' },
    'tasks-per-child': { type: 'string', default: '10' },
    'gpu-concurrency': { type: 'string', default: String(STAGES.local.computePools.gpu.localMaxConcurrency) },
    'attempt-seconds': { type: 'string', default: '300' },
    'startup-seconds': { type: 'string', default: '180' },
    'gpu-hourly': { type: 'string', default: String(DEFAULT_PRICES.gpuInstanceHour) },
    instance: { type: 'string', default: DEFAULT_PRICES.gpuInstanceType },
    'lambda-memory': { type: 'string', default: '512' },
    'aws-request-ms': { type: 'string', default: '10' },
    'init-ms': { type: 'string', default: '400' },
    'no-runtime': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const N = { checkpoints: Number(f.checkpoints), suites: Number(f.suites), tasks: Number(f.tasks), attempts: Number(f.attempts) };
const settings: SweepSettings = { ...STAGES.local.sweeps, shardMaxTasks: Number(f['shard-max-tasks']), tasksPerChild: Number(f['tasks-per-child']), saturationThreshold: 0.99 };
const quiet = { log: () => {} };

async function seed(ports: SweepStepPorts): Promise<void> {
  for (let i = 0; i < N.checkpoints; i++) {
    await registerCheckpoint(ports, { id: `ck-${i}`, model: `m${i}`, serving: { kind: 'endpoint', model: `openai:ck-${i}@http://127.0.0.1:9/v1` }, sweep: false });
  }
  for (let j = 0; j < N.suites; j++) {
    const taskIds = Array.from({ length: N.tasks }, (_, t) => `t${String(t).padStart(4, '0')}`);
    await ports.records.putMany(taskIds.map((t) => ({ ...registryKeys.task(`suite-${j}`, t), kind: 'forge-task', task: sampleTask(`suite-${j}`, t) })));
    await registerSuite(ports, { id: `suite-${j}`, visibility: 'private', owner: 'bench', tasks: { kind: 'records' }, taskIds });
  }
}

/** Steps wrapped to time each call (and, given the counters, the store requests each call made). */
function timed(steps: SweepSteps, into: Map<string, number[]>, requests?: { counts: RequestCounts; into: Map<string, number[]> }): SweepSteps {
  const total = (c: RequestCounts) => c.dynamoWrites + c.dynamoReads + c.s3Puts + c.s3Gets + c.s3Lists;
  const out = {} as Record<string, unknown>;
  for (const [name, step] of Object.entries(steps)) {
    out[name] = async (ports: SweepStepPorts, input: unknown) => {
      const t0 = performance.now();
      const r0 = requests ? total(requests.counts) : 0;
      try {
        return await (step as (p: SweepStepPorts, i: unknown) => Promise<unknown>)(ports, input);
      } finally {
        into.set(name, [...(into.get(name) ?? []), performance.now() - t0]);
        if (requests) requests.into.set(name, [...(requests.into.get(name) ?? []), total(requests.counts) - r0]);
      }
    };
  }
  return out as SweepSteps;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const rates = (ck: string) => 0.3 + 0.1 * Number(ck.slice(3));

// ── 1. The steps, directly ────────────────────────────────────────────────────────────────────────────────────────
const dir1 = mkdtempSync(join(tmpdir(), 'flywheel-bench-sweep-'));
const base1 = openLocalPorts(dir1);
await seed(base1);
const counts = emptyCounts();
const counted = { ...base1, ...countingPorts(base1.records, base1.blobs, counts) };
const stepTimes = new Map<string, number[]>();
const stepRequests = new Map<string, number[]>();
const steps = timed(sweepStepHandlers({ settings, notify: quiet }), stepTimes, { counts, into: stepRequests });
const input = { sweepId: 'bench-steps', trigger: 'manual' as const, requestedAt: new Date().toISOString() };
const t1 = performance.now();
await steps['validate-sweep'](counted, input);
const plan = await steps['plan-shards'](counted, { sweepId: input.sweepId });
let rolloutMs = 0;
const outcomes: ShardOutcome[] = [];
for (const shard of plan.shards) {
  const r0 = performance.now();
  await runScriptedShard(base1, shard.shardKey, rateScript(rates)); // the jobs' writes: not counted as step work
  rolloutMs += performance.now() - r0;
  outcomes.push(await steps['aggregate-shard'](counted, { sweepId: input.sweepId, shard, job: { jobId: `j-${shard.shardId}`, status: 'SUCCEEDED' } }));
}
const comparison = await steps['compare-incumbent'](counted, { sweepId: input.sweepId });
const saturation = await steps['check-saturation'](counted, { sweepId: input.sweepId });
await steps.notify(counted, { sweepId: input.sweepId, shards: outcomes, comparison, saturation });
const stepsWallMs = performance.now() - t1 - rolloutMs;
const childTasks: number[] = [];
for (const shard of plan.shards) {
  const spec = await readShardSpec(base1.blobs, shard.shardKey);
  for (let c = 0; c < spec.arraySize; c++) childTasks.push(shardTasks(spec.taskIds, c, spec.shardCount).length);
}
const stepReport = await getSweepReport(base1, input.sweepId);
base1.close();
rmSync(dir1, { recursive: true, force: true });

// ── 2. The whole local runtime ───────────────────────────────────────────────────────────────────────────────────
let runtime: { wallMs: number; stepMs: number; jobSpanMs: number; transitions: number; status: string; shards: number; results: number } | undefined;
if (!f['no-runtime']) {
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-bench-runtime-'));
  const ports = openLocalPorts(dir);
  await seed(ports);
  const jobs = new LocalJobs({
    dataDir: dir,
    definitions: { rollout: { command: ['node', 'test/sweeps/support/scripted-rollout-job.ts'] } },
    env: { ...process.env, FLYWHEEL_DATA_DIR: dir, FLYWHEEL_SCRIPTED_RATES: JSON.stringify(Object.fromEntries(Array.from({ length: N.checkpoints }, (_, i) => [`ck-${i}`, rates(`ck-${i}`)]))) },
    maxConcurrency: { gpu: Number(f['gpu-concurrency']) },
    pollMs: 50,
  });
  const runtimeTimes = new Map<string, number[]>();
  const wf = new LocalWorkflows(openDatabase(join(dir, 'workflows.sqlite')), {
    [SWEEP_WORKFLOW]: localSweepWorkflow({ steps: timed(sweepStepHandlers({ settings, notify: quiet }), runtimeTimes), ports, jobs, pollMs: 50 }),
  });
  const t0 = performance.now();
  const started = await startSweep({ ...ports, workflows: wf }, { sweepId: 'bench-runtime', attemptsPerTask: N.attempts }, settings);
  const done = await wf.waitFor(started.executionId, { timeoutMs: 1_800_000, pollMs: 20 });
  const wallMs = performance.now() - t0;
  const jobsList = await jobs.list({ category: 'evaluation' });
  const jobSpanMs = sum(jobsList.filter((j) => j.startedAt && j.stoppedAt).map((j) => j.stoppedAt! - j.startedAt!));
  const transitions = wf.history(started.executionId).filter((e) => e.type === 'StateEntered').length;
  const report = await getSweepReport(ports, 'bench-runtime');
  runtime = { wallMs, stepMs: sum([...runtimeTimes.values()].flat()), jobSpanMs, transitions, status: `${done.status}/${report.sweep.status}`, shards: report.sweep.shardCount ?? 0, results: report.results.length };
  await wf.close();
  await jobs.close();
  ports.close();
  rmSync(dir, { recursive: true, force: true });
}

// ── 3. Cost ──────────────────────────────────────────────────────────────────────────────────────────────────────
const attempts = N.checkpoints * N.suites * 2 * N.tasks * N.attempts;
const children = childTasks.length;
/**
 * What the rollout children do against DynamoDB and S3 per attempt (lib/harness/eval/run-eval.ts, run-attempt.ts):
 * read the attempt record (resume check), write it (≈ 2 KB with its try history: 2 WRU), write the trajectory and the
 * diff blobs; per task one task-record read; per child one shard-spec GET, the run record write and the final listing.
 */
const rollout = { writeUnits: attempts * 2 + children, readUnits: attempts + N.checkpoints * N.suites * 2 * N.tasks + children * 2, puts: attempts * 2, gets: children };
const memoryMb = Number(f['lambda-memory']);
/**
 * Lambda time on AWS = the step's time here + its store requests × one AWS request's latency (DynamoDB / S3 from
 * Lambda: `--aws-request-ms`, taken as sequential: an upper bound) + one init per step function (billed since 2025).
 */
const requestMs = Number(f['aws-request-ms']);
const lambda = [...stepTimes].flatMap(([name, times]) =>
  times.map((ms, i) => ({ durationMs: ms + (stepRequests.get(name)?.[i] ?? 0) * requestMs + (i === 0 ? Number(f['init-ms']) : 0), memoryMb })),
);
const cost = estimateSweepCost(
  {
    lambda,
    // Measured on the local runtime; without it, the definition's count: 7 states around the Map + 2 per shard.
    stateTransitions: runtime?.transitions ?? 7 + 2 * plan.shardCount,
    childTasks,
    attemptsPerTask: N.attempts,
    attemptSeconds: Number(f['attempt-seconds']),
    childStartupSeconds: Number(f['startup-seconds']),
    s3Puts: counts.s3Puts + rollout.puts,
    s3Gets: counts.s3Gets + rollout.gets,
    dynamoWriteUnits: counts.dynamoWriteUnits + rollout.writeUnits,
    dynamoReadUnits: counts.dynamoReadUnits + rollout.readUnits,
  },
  { ...DEFAULT_PRICES, gpuInstanceHour: Number(f['gpu-hourly']), gpuInstanceType: f.instance! },
);

const result = {
  size: { ...N, modes: 2, attemptsTotal: attempts, shards: plan.shardCount, children },
  steps: {
    wallMs: Math.round(stepsWallMs),
    perStep: Object.fromEntries([...stepTimes].map(([k, v]) => [k, { calls: v.length, totalMs: Math.round(sum(v)), meanMs: Math.round((sum(v) / v.length) * 10) / 10, requests: sum(stepRequests.get(k) ?? []) }])),
    requests: counts,
    resultRows: stepReport.results.length,
  },
  runtime: runtime && { ...runtime, wallMs: Math.round(runtime.wallMs), stepMs: Math.round(runtime.stepMs), overheadPerShardMs: Math.round(runtime.wallMs / Math.max(1, runtime.shards)) },
  cost,
};

if (f.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const usd = (x: number) => `$${x < 0.01 ? x.toFixed(5) : x.toFixed(2)}`;
  const lines = [
    `sweep bench: ${N.checkpoints} checkpoints × ${N.suites} suites × 2 modes × ${N.tasks} tasks × ${N.attempts} attempt(s) = ${attempts} attempts; ${plan.shardCount} shards, ${children} array children`,
    '',
    `1. steps over the local ports (scripted attempts excluded): ${result.steps.wallMs} ms`,
    ...Object.entries(result.steps.perStep).map(([k, v]) => `   ${k.padEnd(22)} ${String(v.calls).padStart(4)} call(s)  ${String(v.totalMs).padStart(6)} ms  (${v.meanMs} ms each)  ${String(v.requests).padStart(4)} store requests`),
    `   requests: DynamoDB ${counts.dynamoWrites} writes (${counts.dynamoWriteUnits} WRU), ${counts.dynamoReads} reads (${counts.dynamoReadUnits} RRU); S3 ${counts.s3Puts} PUT, ${counts.s3Gets} GET`,
    '',
    runtime
      ? `2. local runtime (state machine + ${children} child processes, GPU pool concurrency ${f['gpu-concurrency']}): ${result.runtime!.wallMs} ms wall, ${runtime.status}; ` +
        `steps ${result.runtime!.stepMs} ms, array jobs' spans ${Math.round(runtime.jobSpanMs)} ms; ${runtime.transitions} state transitions; ≈ ${result.runtime!.overheadPerShardMs} ms per shard`
      : '2. local runtime: skipped (--no-runtime)',
    '',
    `3. AWS cost of this sweep (docs/cost-model.md; ${f['attempt-seconds']} s per attempt, ${f['startup-seconds']} s child startup, ${f.instance} at $${f['gpu-hourly']}/h;`,
    `   Lambda at ${memoryMb} MB, each step's time here + ${requestMs} ms per store request + ${f['init-ms']} ms init per step function):`,
    `   Lambda          ${cost.lambda.requests} requests, ${cost.lambda.gbSeconds.toFixed(2)} GB-s      ${usd(cost.lambda.usd)}`,
    `   Step Functions  ${cost.stepFunctions.transitions} transitions            ${usd(cost.stepFunctions.usd)}`,
    `   Batch (EC2)     ${cost.batch.instanceHours.toFixed(1)} ${cost.batch.instanceType} hours        ${usd(cost.batch.usd)}`,
    `   S3              ${cost.s3.puts} PUT, ${cost.s3.gets} GET           ${usd(cost.s3.usd)}`,
    `   DynamoDB        ${cost.dynamodb.writeUnits} WRU, ${cost.dynamodb.readUnits} RRU    ${usd(cost.dynamodb.usd)}`,
    `   total ${usd(cost.totalUsd)} (orchestration ${usd(cost.orchestrationUsd)}, ${((cost.orchestrationUsd / cost.totalUsd) * 100).toFixed(3)}% of it)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
