import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { ConfigurationError } from '../errors.ts';
import { groupTasksByImage } from '../rollout/environment-images.ts';
import { runEvalOnJobsPerImage } from '../rollout/run-eval-on-jobs.ts';
import { LocalJobs } from '../drivers/local/local-jobs.ts';
import { localJobDefinitionsFromEnv } from '../drivers/local/jobs/job-definitions.ts';
import { openLocalPorts } from '../drivers/local/local-ports.ts';
import { harnessGrader, registryJudgeResolver } from '../harness/attempt/harness-grader.ts';
import type { CompareModesReport } from '../harness/eval/compare-modes-report.ts';
import { compareModes } from '../harness/eval/compare-modes.ts';
import { loadSuite } from '../harness/eval/load-suite.ts';
import type { EvalResults } from '../harness/eval/eval-results.ts';
import { runEval, type EvalProgress } from '../harness/eval/run-eval.ts';
import { NamespaceSandboxProvider } from '../harness/sandbox/namespace-sandbox.ts';
import { HARNESS_MODES, type HarnessMode } from '../harness/task/harness-mode.ts';
import { adaptiveConcurrency } from '../models/adaptive-concurrency.ts';
import { createModel } from '../models/create-model.ts';
import { JUDGE_MODEL_ENV } from '../modes/modes-models.ts';
import type { BlobsPort } from '../ports/blobs.ts';
import type { RecordsPort } from '../ports/records.ts';
import { USER_MODEL_ENV } from '../rollout/shard-spec.ts';
import { table } from './table.ts';
import { dataDirFrom } from './target.ts';
import { formatPercent } from '../format-percent.ts';

interface EvalRunFlags {
  suite: string;
  model: string;
  mode: string;
  concurrency: string;
  attempts: string;
  runId?: string;
  dataDir?: string;
  maxTries: string;
  retryDelayMs: string;
  checkpoint?: string;
  judgeModel?: string;
  userModel?: string;
  json?: boolean;
  jobs?: string;
}

/** The rubric judge of judge-graded tasks: `--judge-model`, else FLYWHEEL_JUDGE_MODEL (the failure-mode judge's setting). */
function judgeSpecFrom(flags: { judgeModel?: string }): string | undefined {
  return flags.judgeModel?.trim() || process.env[JUDGE_MODEL_ENV]?.trim() || undefined;
}

/** The simulated user of behavioural cases: `--user-model`, else FLYWHEEL_USER_MODEL. */
function userSpecFrom(flags: { userModel?: string }): string | undefined {
  return flags.userModel?.trim() || process.env[USER_MODEL_ENV]?.trim() || undefined;
}

/**
 * The harness grader, with the rubric judge when one is configured (judge-graded tasks otherwise end ungraded): a
 * task's `grading.judge`, else the promoted `rubric-judge`, is read from the judge registry of the data folder.
 */
function graderFor(provider: NamespaceSandboxProvider, ports: { blobs: BlobsPort; records: RecordsPort }, judgeSpec: string | undefined, log: (line: string) => void) {
  if (!judgeSpec) log(`no judge model (--judge-model or ${JUDGE_MODEL_ENV}): tasks graded by a judge end ungraded`);
  return harnessGrader({
    provider,
    blobs: ports.blobs,
    ...(judgeSpec ? { judge: { model: createModel(judgeSpec), resolve: registryJudgeResolver(ports.records), modelFor: (spec: string) => createModel(spec) } } : {}),
  });
}

/**
 * The jobs port of the data folder, running its jobs in this process, or, when `npm start` already runs them (one
 * runner per folder), only submitting and watching.
 */
function openLocalJobsRunner(dataDir: string, log: (line: string) => void): LocalJobs {
  try {
    return new LocalJobs({ dataDir, run: true, definitions: localJobDefinitionsFromEnv() });
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    log(`the local runtime on ${dataDir} runs the job`);
    return new LocalJobs({ dataDir, run: false, definitions: localJobDefinitionsFromEnv() });
  }
}

function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive integer (got "${value}")`);
  return n;
}

const pct = (v: number | null) => formatPercent(v, '-');

/** One progress line per attempt event, e.g. `[3/10] calc/add #1 passed (4.2 s, 1,234 tokens)`. */
export function progressLine(event: EvalProgress): string {
  switch (event.type) {
    case 'skipped':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${event.status} (already finished, skipped)`;
    case 'started':
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} started`;
    case 'try-failed':
      return `        ${event.taskId} #${event.n} try ${event.attempt.try}: infrastructure error (${event.attempt.infrastructureError?.phase}: ${event.attempt.infrastructureError?.message.split('\n')[0]})`;
    case 'finished': {
      const r = event.record;
      const tokens = r.usageAllTries.promptTokens + r.usageAllTries.completionTokens;
      const why = r.status === 'failed' && r.grade?.reasons?.[0] ? ` — ${r.grade.reasons[0]}` : '';
      return `[${event.done}/${event.total}] ${event.taskId} #${event.n} ${r.status}${why} (${(r.durationMs / 1000).toFixed(1)} s, ${tokens.toLocaleString('en-US')} tokens, ${r.tries} ${r.tries === 1 ? 'try' : 'tries'})`;
    }
  }
}

/** The summary table: one row per task, then the suite's totals. */
export function summaryTable(results: EvalResults): string {
  const k = results.passAtK.k;
  const rows = results.perTask.map((t) => [t.taskId, String(t.scored), String(t.passed), String(t.infrastructureErrors), String(t.ungraded), pct(t.passAt1), pct(t.passAtK)]);
  rows.push([
    `all (${results.tasks} tasks)`,
    String(results.counts.passed + results.counts.failed),
    String(results.counts.passed),
    String(results.counts['infrastructure-error']),
    String(results.counts.ungraded),
    pct(results.passAt1),
    pct(results.passAtK.value),
  ]);
  const lines = [
    table(['task', 'scored', 'passed', 'infra errors', 'ungraded', 'pass@1', `pass@${k}`], rows),
    `model ${results.model} · mode ${results.mode} · ${results.attemptsPerTask} attempt(s) per task · ran ${results.ran}, skipped ${results.skipped} (resumed)`,
    `tokens ${results.tokens.total.toLocaleString('en-US')} (prompt ${results.tokens.prompt.toLocaleString('en-US')}, completion ${results.tokens.completion.toLocaleString('en-US')}) · wall time ${(results.wallTimeMs / 1000).toFixed(1)} s · attempt time ${(results.attemptTimeMs / 1000).toFixed(1)} s`,
  ];
  if (results.counts['infrastructure-error'] > 0) {
    lines.push(`${results.counts['infrastructure-error']} attempt(s) ended in infrastructure errors: not scored; run again with --run-id ${results.runId} to retry them`);
  }
  for (const t of results.perTask) {
    if (t.ungradedReason) lines.push(`${t.taskId}: ungraded — ${t.ungradedReason}`);
    if (!t.criteria) continue;
    const parts = Object.entries(t.criteria).map(([id, c]) => `${id} ${pct(c.passRate)}${c.voided > 0 ? ` (${c.voided} voided)` : ''}`);
    lines.push(`${t.taskId}: judge score ${t.judgeScore === null || t.judgeScore === undefined ? '-' : t.judgeScore.toFixed(2)} · criteria ${parts.join(', ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `flywheel eval run`: a suite × K attempts in one harness mode, locally, resumable by run id. */
export function registerEvalCommands(program: Command): void {
  const evalCommand = program.command('eval').description('evaluations: run a suite in the harness and score it');
  evalCommand
    .command('run')
    .description('run every task of a suite K times in the strict (or lenient) harness; resumes a run id where it stopped')
    .requiredOption('--suite <dir>', 'folder of task JSON files, or the name of a registered (e.g. forged) suite')
    .requiredOption('--model <spec>', 'openai:<model>@<baseUrl> or bedrock:<modelId>')
    .option('--mode <mode>', 'strict | lenient', 'strict')
    .option('--concurrency <n>', 'attempts at a time (model calls also adapt to rate limits)', '1')
    .option('--attempts <k>', 'attempts per task (the k of pass@k)', '1')
    .option('--run-id <id>', 'run id; an existing one resumes, skipping finished attempts (default: a new id)')
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--max-tries <n>', 'tries per attempt when infrastructure fails (sandbox, setup, model endpoint down)', '3')
    .option('--retry-delay-ms <ms>', 'base backoff between those tries', '2000')
    .option('--checkpoint <name>', 'the policy checkpoint under test, recorded in trajectories')
    .option('--judge-model <spec>', `the rubric judge of tasks graded by a judge (openai:<model>@<baseUrl> | bedrock:<id>; env ${JUDGE_MODEL_ENV})`)
    .option('--user-model <spec>', `the simulated user of behavioural cases with a simulatedUser (openai:<model>@<baseUrl> | bedrock:<id>; env ${USER_MODEL_ENV})`)
    .option('--jobs <n>', 'run it as an array job of n children on the jobs port (the rollout image, category evaluation), as a sweep runs a shard, one job per environment image its tasks name; a folder suite')
    .option('--json', 'print the results JSON instead of the table')
    .action(async (flags: EvalRunFlags) => {
      if (flags.mode !== 'strict' && flags.mode !== 'lenient') throw new Error(`--mode must be strict or lenient (got "${flags.mode}")`);
      const mode: HarnessMode = flags.mode;
      const concurrency = positiveInt(flags.concurrency, '--concurrency');
      const attempts = positiveInt(flags.attempts, '--attempts');
      const maxTries = positiveInt(flags.maxTries, '--max-tries');
      const retryDelayMs = Number(flags.retryDelayMs);
      if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) throw new Error('--retry-delay-ms must be a number >= 0');
      const runId = flags.runId ?? `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runId)) throw new Error(`--run-id: letters, digits, . _ - only (got "${runId}")`);
      const model = adaptiveConcurrency(createModel(flags.model), { initial: concurrency, max: concurrency });
      const dataDir = dataDirFrom(flags);
      const shards = flags.jobs === undefined ? undefined : positiveInt(flags.jobs, '--jobs');
      const ports = openLocalPorts(dataDir);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      /** The results JSON beside the run, the table (or JSON) on stdout; exit 2 while attempts are infrastructure errors. */
      const report = async (results: EvalResults) => {
        const dir = join(dataDir, 'evals', runId);
        await mkdir(dir, { recursive: true });
        const file = join(dir, `results-${mode}.json`);
        await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
        process.stdout.write(flags.json ? `${JSON.stringify(results, null, 2)}\n` : summaryTable(results));
        log(`results: ${file}`);
        // Exit 2: some attempts are still infrastructure errors, so the run is not complete; resume it.
        if (results.counts['infrastructure-error'] > 0) process.exitCode = 2;
      };
      try {
        const tasks = await loadSuite(flags.suite, { cacheDir: join(dataDir, 'sources'), blobs: ports.blobs, records: ports.records });
        if (shards !== undefined) {
          const suiteDir = resolve(flags.suite);
          if (!existsSync(suiteDir) || !statSync(suiteDir).isDirectory()) throw new Error(`--jobs runs a folder suite (the children load it); ${flags.suite} is not a folder here`);
          const jobs = openLocalJobsRunner(dataDir, log);
          try {
            const groups = groupTasksByImage(tasks);
            log(
              `eval run ${runId}: ${tasks.length} task(s) × ${attempts} attempt(s), mode ${mode}, as ${shards} job child(ren) on the jobs port${groups.some((g) => g.image !== undefined) ? ` per environment image (${groups.length} job(s): ${groups.map((g) => `${g.image ?? 'no image'} × ${g.tasks.length}`).join(', ')})` : ''}, model ${model.id}`,
            );
            // One job per environment image the tasks name (the rollout image for those naming none).
            const { results, jobs: ran } = await runEvalOnJobsPerImage({
              runId,
              suiteDir,
              tasks,
              suite: basename(suiteDir),
              model: flags.model,
              modelId: model.id,
              mode,
              attempts,
              concurrency,
              maxTries,
              retryDelayMs,
              ...(flags.checkpoint ? { checkpoint: flags.checkpoint } : {}),
              ...(judgeSpecFrom(flags) ? { judgeModel: judgeSpecFrom(flags)! } : {}),
              ...(userSpecFrom(flags) ? { userModel: userSpecFrom(flags)! } : {}),
              shards,
              ports,
              jobs,
              pollMs: 250,
              onSubmitted: ({ jobId, image }) => log(`job ${jobId}${image ? ` (image ${image})` : ''} (follow it: flywheel jobs logs ${jobId} --index 0 --follow)`),
            });
            for (const { job, image } of ran) log(`job ${job.jobId}${image ? ` (image ${image})` : ''} ${job.status}`);
            await report(results);
          } finally {
            await jobs.close();
          }
          return;
        }
        const provider = new NamespaceSandboxProvider();
        await provider.sweep();
        log(`eval run ${runId}: ${tasks.length} task(s) × ${attempts} attempt(s), mode ${mode}, concurrency ${concurrency}, model ${model.id}`);
        const results = await runEval({
          runId,
          tasks,
          mode,
          attempts,
          concurrency,
          model,
          ...(userSpecFrom(flags) ? { userModel: createModel(userSpecFrom(flags)!) } : {}),
          provider,
          ports,
          grade: graderFor(provider, ports, judgeSpecFrom(flags), log),
          retry: { maxTries, baseDelayMs: retryDelayMs, maxDelayMs: Math.max(retryDelayMs, 60_000) },
          ...(flags.checkpoint ? { policy: { checkpoint: flags.checkpoint } } : {}),
          onProgress: (event) => log(progressLine(event)),
        });
        await report(results);
      } finally {
        ports.close();
      }
    });

  evalCommand
    .command('compare-modes')
    .description('run a suite in strict and lenient mode per model; report each score, the difference with a 95% CI, and the lenient-only passes')
    .requiredOption('--suite <dir>', 'folder of task JSON files, or the name of a registered (e.g. forged) suite')
    .option('--model <spec>', 'openai:<model>@<baseUrl> or bedrock:<modelId> (required; repeat for several models)', (v: string, all: string[] | undefined) => [...(all ?? []), v])
    .option('--concurrency <n>', 'attempts at a time', '1')
    .option('--attempts <k>', 'attempts per task and mode', '1')
    .option('--run-id <id>', 'run id; an existing one resumes (finished attempts are read back, not run again)')
    .option('--no-run', 'run nothing: report from the records of an earlier run with this --run-id')
    .option('--data-dir <dir>', 'local data folder (env FLYWHEEL_DATA_DIR; default .flywheel/)')
    .option('--max-tries <n>', 'tries per attempt when infrastructure fails', '3')
    .option('--retry-delay-ms <ms>', 'base backoff between those tries', '2000')
    .option('--resamples <n>', 'bootstrap resamples for the confidence interval', '10000')
    .option('--seed <n>', 'bootstrap seed', '20261202')
    .option('--checkpoint <name>', 'the policy checkpoint under test, recorded in trajectories')
    .option('--judge-model <spec>', `the rubric judge of tasks graded by a judge (env ${JUDGE_MODEL_ENV})`)
    .option('--user-model <spec>', `the simulated user of behavioural cases (env ${USER_MODEL_ENV})`)
    .option('--json', 'print the report JSON instead of the table')
    .action(async (flags: CompareFlags) => {
      if (!flags.model || flags.model.length === 0) throw new Error('--model is required (repeat it to compare several models)');
      const concurrency = positiveInt(flags.concurrency, '--concurrency');
      const attempts = positiveInt(flags.attempts, '--attempts');
      const maxTries = positiveInt(flags.maxTries, '--max-tries');
      const resamples = positiveInt(flags.resamples, '--resamples');
      const seed = Number(flags.seed);
      if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer (got "${flags.seed}")`);
      const retryDelayMs = Number(flags.retryDelayMs);
      if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) throw new Error('--retry-delay-ms must be a number >= 0');
      if (!flags.run && !flags.runId) throw new Error('--no-run reads an earlier run: give its --run-id');
      const runId = flags.runId ?? `compare-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(runId)) throw new Error(`--run-id: letters, digits, . _ - only (got "${runId}")`);
      const models = flags.model.map((spec) => adaptiveConcurrency(createModel(spec), { initial: concurrency, max: concurrency }));
      const dataDir = dataDirFrom(flags);
      const ports = openLocalPorts(dataDir);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      try {
        const tasks = await loadSuite(flags.suite, { cacheDir: join(dataDir, 'sources'), blobs: ports.blobs, records: ports.records });
        const provider = new NamespaceSandboxProvider();
        if (flags.run) await provider.sweep();
        log(`eval compare-modes ${runId}: ${tasks.length} task(s) × ${attempts} attempt(s) × 2 modes × ${models.length} model(s)${flags.run ? '' : ' (from records, nothing runs)'}`);
        const report = await compareModes({
          runId,
          tasks,
          models,
          attempts,
          concurrency,
          provider,
          ports,
          run: flags.run,
          ...(userSpecFrom(flags) ? { userModel: createModel(userSpecFrom(flags)!) } : {}),
          grade: graderFor(provider, ports, judgeSpecFrom(flags), log),
          retry: { maxTries, baseDelayMs: retryDelayMs, maxDelayMs: Math.max(retryDelayMs, 60_000) },
          bootstrap: { resamples, seed },
          ...(flags.checkpoint ? { policy: { checkpoint: flags.checkpoint } } : {}),
          onProgress: (event) => log(`${event.mode.padEnd(7)} ${progressLine(event)}`),
        });
        const dir = join(dataDir, 'evals', runId);
        await mkdir(dir, { recursive: true });
        const file = join(dir, 'compare-modes.json');
        await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : compareModesTable(report));
        log(`report: ${file}`);
        const incomplete = report.models.some((m) => m.strict.counts['infrastructure-error'] + m.lenient.counts['infrastructure-error'] + m.strict.missing + m.lenient.missing > 0);
        if (incomplete) process.exitCode = 2;
      } finally {
        ports.close();
      }
    });
}

interface CompareFlags {
  suite: string;
  model?: string[];
  concurrency: string;
  attempts: string;
  runId?: string;
  run: boolean;
  dataDir?: string;
  maxTries: string;
  retryDelayMs: string;
  resamples: string;
  seed: string;
  checkpoint?: string;
  judgeModel?: string;
  userModel?: string;
  json?: boolean;
}

function pp(v: number): string {
  const x = v * 100;
  return `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
}

/**
 * The compare-modes report as text: one row per model (strict and lenient pass@1, the difference in percentage points
 * with its 95% interval), then per model the tasks that passed only in lenient mode with the evidence recorded.
 */
export function compareModesTable(report: CompareModesReport): string {
  const rows = report.models.map((m) => {
    const d = m.difference;
    return [
      m.model,
      pct(m.strict.passAt1),
      pct(m.lenient.passAt1),
      d.estimate === null ? '-' : `${pp(d.estimate)} pp`,
      d.ci95 ? `[${pp(d.ci95[0])}, ${pp(d.ci95[1])}]` : '-',
      String(d.pairedTasks),
      d.signTest.pValue === null ? '-' : d.signTest.pValue.toPrecision(2),
      String(m.lenientOnly.length),
      `${m.strict.integrityFailures}/${m.lenient.integrityFailures}`,
    ];
  });
  const lines = [
    table(['model', 'strict pass@1', 'lenient pass@1', 'lenient − strict', '95% CI', 'paired tasks', 'sign-test p', 'lenient-only', 'integrity failures (strict/lenient)'], rows),
    `${report.tasks} task(s) × ${report.attemptsPerTask} attempt(s) per mode · CI: paired bootstrap over tasks, ${report.models[0]?.difference.resamples ?? 0} resamples, seed ${report.models[0]?.difference.seed ?? 0}`,
  ];
  for (const m of report.models) {
    const notScored = HARNESS_MODES
      .map((mode) => ({ mode, n: m[mode].counts['infrastructure-error'] + m[mode].counts.ungraded + m[mode].missing }))
      .filter((x) => x.n > 0);
    if (notScored.length > 0) lines.push(`${m.model}: not scored: ${notScored.map((x) => `${x.n} ${x.mode} attempt(s)`).join(', ')} (infrastructure errors, ungraded or missing; resume with --run-id ${report.runId})`);
    const criterionKeys = [...new Set([...Object.keys(m.strict.criteria ?? {}), ...Object.keys(m.lenient.criteria ?? {})])].sort();
    if (criterionKeys.length > 0) {
      const rate = (t: { passRate: number | null; judged: number; voided: number } | undefined) => (t ? `${pct(t.passRate)} of ${t.judged}${t.voided > 0 ? ` (${t.voided} voided)` : ''}` : '-');
      lines.push('', `rubric criteria (judge pass rate) — ${m.model}:`, table(['task:criterion', 'strict', 'lenient'], criterionKeys.map((k) => [k, rate(m.strict.criteria?.[k]), rate(m.lenient.criteria?.[k])])));
    }
    if (m.lenientOnly.length === 0) continue;
    lines.push('', `passed only in lenient mode — ${m.model}:`);
    for (const t of m.lenientOnly) {
      lines.push(`  ${t.taskId}: lenient ${t.lenient.passed}/${t.lenient.scored} passed, strict ${t.strict.passed}/${t.strict.scored}`);
      for (const [mode, evidence] of [['lenient', t.evidence.lenient], ['strict', t.evidence.strict]] as const) {
        for (const e of evidence.slice(0, 8)) lines.push(`    ${mode.padEnd(7)} ${e.kind}: ${e.summary}`);
        if (evidence.length > 8) lines.push(`    ${mode.padEnd(7)} … ${evidence.length - 8} more`);
        if (evidence.length === 0) lines.push(`    ${mode.padEnd(7)} (nothing recorded)`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
