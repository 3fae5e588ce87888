/**
 * `flywheel eval compare-modes`: how much of a model's score is shortcut. The same suite runs in the strict harness
 * (no history, no open network) and the lenient one (history and network kept); per model the report gives the
 * pass@1 in each mode, their difference (lenient − strict) with a 95% confidence interval, and the tasks that passed
 * only in lenient mode together with the evidence the harness recorded about them (git commands that read history,
 * blocked requests, reads outside the workspace, integrity flags of the diff, the post-attempt history re-audit). Each
 * mode's score also counts its integrity failures apart (`integrityFailures`: attempts failed for a failed re-audit
 * or a tampered verdict rather than a wrong fix).
 *
 * The interval is a paired percentile bootstrap over tasks: a task's paired difference is its lenient pass@1 minus its
 * strict pass@1 (tasks scored in both modes only); tasks are resampled with replacement `resamples` times (default
 * 10,000) from a fixed-seed PRNG (mulberry32, default seed 20261202), so the same records always give the same
 * interval. With few tasks the bootstrap interval is too narrow (one task gives a zero-width interval), so the
 * report also carries an exact two-sided sign test over the tasks whose difference is not zero.
 *
 * Attempts are stored under a run id per model (`<runId>.<model key>`), both modes in the same run, so a second call
 * with the same run id resumes: finished attempts are skipped (read back from the records) and only the missing or
 * infrastructure-error ones run. With `run: false` nothing runs and the report is built from the records alone.
 */
import { createHash } from 'node:crypto';
import type { BlobsPort } from '../../ports/blobs.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { ValidationError } from '../../errors.ts';
import type { AttemptRecord } from '../attempt/attempt-record.ts';
import { listAttemptRecords } from '../attempt/read-attempt-records.ts';
import type { AttemptGrader, AttemptRetryPolicy } from '../attempt/run-attempt.ts';
import type { SandboxProvider } from '../sandbox/sandbox.ts';
import { HARNESS_MODES, type HarnessMode } from '../task/harness-mode.ts';
import { COMPARE_MODES_VERSION, type CompareModesReport, type Evidence, type LenientOnlyTask, type ModeScore, type ModelComparison } from './compare-modes-report.ts';
import type { SuiteTask } from './load-suite.ts';
import { compareModesRecord } from './record-codecs.ts';
import { criterionScores } from './criterion-scores.ts';
import { runEval, summarizeAttempts, type EvalProgress } from './run-eval.ts';
import { mulberry32 } from '../../shared/seeded-random.ts';

export interface CompareModesInput {
  runId: string;
  tasks: SuiteTask[];
  models: ModelsPort[];
  /** The simulated user of behavioural cases (`RunEvalInput.userModel`). */
  userModel?: ModelsPort;
  /** Attempts per task and mode. */
  attempts: number;
  concurrency: number;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  grade?: AttemptGrader;
  retry?: Partial<AttemptRetryPolicy>;
  policy?: { checkpoint: string; weightVersion?: string | number };
  /** false: run nothing, report from the records of an earlier run. Default true. */
  run?: boolean;
  bootstrap?: { resamples?: number; seed?: number };
  onProgress?: (event: EvalProgress & { model: string; mode: HarnessMode }) => void;
  now?: () => Date;
}

/** The run id one model's attempts live under: stable for a model id, path- and key-safe. */
export function modelRunId(runId: string, modelId: string): string {
  const slug = modelId.replace(/^[a-z]+:/, '').replace(/@.*$/, '').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 40);
  const hash = createHash('sha256').update(modelId).digest('hex').slice(0, 8);
  return `${runId}.${slug || 'model'}-${hash}`;
}


/**
 * 95% percentile bootstrap interval of the mean of paired differences.
 *
 * @example
 * pairedBootstrapCi([1, 0, 1, 0.5], { resamples: 10_000, seed: 20261202 }); // [0.25, 1]
 */
export function pairedBootstrapCi(diffs: number[], options: { resamples: number; seed: number }): [number, number] | null {
  const n = diffs.length;
  if (n === 0) return null;
  const random = mulberry32(options.seed);
  const means = new Float64Array(options.resamples);
  for (let b = 0; b < options.resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += diffs[Math.floor(random() * n)]!;
    means[b] = sum / n;
  }
  means.sort();
  const lo = means[Math.floor(0.025 * options.resamples)]!;
  const hi = means[Math.max(0, Math.ceil(0.975 * options.resamples) - 1)]!;
  return [lo, hi];
}

/** Exact two-sided sign test: P(as extreme a split of `positive` vs `negative` under p = 1/2). */
export function signTestPValue(positive: number, negative: number): number | null {
  const m = positive + negative;
  if (m === 0) return null;
  const k = Math.min(positive, negative);
  // P(X <= k), X ~ Binomial(m, 1/2), summed in log space so large m does not underflow term by term.
  let logC = 0;
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(m - i + 1) - Math.log(i);
    tail += Math.exp(logC - m * Math.LN2);
  }
  return Math.min(1, 2 * tail);
}

function evidenceOf(records: AttemptRecord[]): Evidence[] {
  const byKey = new Map<string, Evidence>();
  const add = (kind: Evidence['kind'], summary: string, n: number) => {
    const key = `${kind}\0${summary}`;
    const e = byKey.get(key) ?? { kind, summary, attempts: [] };
    if (!e.attempts.includes(n)) e.attempts.push(n);
    byKey.set(key, e);
  };
  for (const r of records) {
    for (const o of r.observations ?? []) {
      const d = o.detail;
      if (o.kind === 'git.history-needed') {
        const argv = Array.isArray(d['argv']) ? d['argv'].join(' ') : 'git';
        add(o.kind, `${argv}${d['failed'] ? ` (failed, exit ${String(d['exitCode'])})` : ''}`, r.n);
      } else if (o.kind === 'network.blocked' || o.kind === 'network.allowed') {
        const host = String(d['host'] ?? d['target'] ?? '?');
        const via = d['via'] === 'dns' || d['via'] === 'socket' ? ` (${String(d['via'])})` : '';
        add(o.kind, `${o.kind === 'network.blocked' ? 'blocked' : 'allowed'} ${host}${d['port'] ? `:${String(d['port'])}` : ''}${via}`, r.n);
      } else {
        add(o.kind, `read ${String(d['path'] ?? '?')}`, r.n);
      }
    }
    const flags = r.grade?.integrity ?? [];
    for (const f of flags) add(f.kind, `${f.kind} ${f.file}${f.line !== null ? `:${f.line}` : ''}: ${f.evidence}`, r.n);
    const reaudit = r.historyReaudit;
    if (reaudit && !reaudit.ok) add('history.recovered', reaudit.problems.join('; '), r.n);
    for (const reason of r.integrityFailure?.reasons ?? []) if (!reason.startsWith('history-reaudit-failed')) add('integrity.failure', reason, r.n);
  }
  return [...byKey.values()];
}

function modeScore(records: AttemptRecord[], mode: HarnessMode, taskIds: string[], attempts: number, runId: string, modelId: string): ModeScore {
  const now = new Date();
  const s = summarizeAttempts(records, { runId, mode, model: modelId, attemptsPerTask: attempts, concurrency: 1, taskIds, ran: 0, skipped: 0, startedAt: now, finishedAt: now });
  const present = Object.values(s.counts).reduce((a, b) => a + b, 0);
  const inMode = records.filter((r) => r.mode === mode && taskIds.includes(r.taskId) && r.n < attempts);
  const integrityFailures = inMode.filter((r) => r.status === 'failed' && r.integrityFailure).length;
  const criteria = criterionScores(inMode, { byTask: true });
  return {
    passAt1: s.passAt1,
    scoredTasks: s.perTask.filter((t) => t.scored > 0).length,
    counts: s.counts,
    missing: taskIds.length * attempts - present,
    integrityFailures,
    ...(Object.keys(criteria).length > 0 ? { criteria } : {}),
  };
}

/** Builds one model's comparison from its attempt records (both modes). */
export function compareRecords(
  records: AttemptRecord[],
  meta: { runId: string; model: string; taskIds: string[]; attempts: number; resamples?: number; seed?: number },
): ModelComparison {
  const resamples = meta.resamples ?? 10_000;
  const seed = meta.seed ?? 20261202;
  const mine = records.filter((r) => meta.taskIds.includes(r.taskId) && r.n < meta.attempts);
  const of = (taskId: string, mode: HarnessMode) => mine.filter((r) => r.taskId === taskId && r.mode === mode);
  const tally = (rs: AttemptRecord[]) => {
    const passed = rs.filter((r) => r.status === 'passed').length;
    return { passed, scored: passed + rs.filter((r) => r.status === 'failed').length };
  };
  const diffs: number[] = [];
  const lenientOnly: LenientOnlyTask[] = [];
  const strictOnly: string[] = [];
  for (const taskId of meta.taskIds) {
    const strictRecords = of(taskId, 'strict');
    const lenientRecords = of(taskId, 'lenient');
    const s = tally(strictRecords);
    const l = tally(lenientRecords);
    if (s.scored > 0 && l.scored > 0) diffs.push(l.passed / l.scored - s.passed / s.scored);
    if (l.passed > 0 && s.passed === 0 && s.scored > 0) {
      lenientOnly.push({
        taskId,
        lenient: l,
        strict: s,
        evidence: { lenient: evidenceOf(lenientRecords.filter((r) => r.status === 'passed')), strict: evidenceOf(strictRecords) },
      });
    }
    if (s.passed > 0 && l.passed === 0 && l.scored > 0) strictOnly.push(taskId);
  }
  const positive = diffs.filter((d) => d > 0).length;
  const negative = diffs.filter((d) => d < 0).length;
  return {
    model: meta.model,
    runId: meta.runId,
    strict: modeScore(mine, 'strict', meta.taskIds, meta.attempts, meta.runId, meta.model),
    lenient: modeScore(mine, 'lenient', meta.taskIds, meta.attempts, meta.runId, meta.model),
    difference: {
      estimate: diffs.length === 0 ? null : diffs.reduce((a, b) => a + b, 0) / diffs.length,
      ci95: pairedBootstrapCi(diffs, { resamples, seed }),
      pairedTasks: diffs.length,
      method: 'paired-bootstrap-percentile',
      resamples,
      seed,
      signTest: { positive, negative, pValue: signTestPValue(positive, negative) },
    },
    lenientOnly,
    strictOnly,
  };
}

/**
 * Runs (or resumes, or only reads) a suite in both modes for every model and compares the scores.
 *
 * @example
 * const report = await compareModes({ runId: 'cmp-1', tasks: await loadSuite('suites/smoke'), models: [model],
 *   attempts: 1, concurrency: 2, provider, ports, grade: harnessGrader({ provider, blobs: ports.blobs }) });
 * for (const m of report.models) console.log(m.model, m.strict.passAt1, m.lenient.passAt1, m.difference.ci95);
 */
export async function compareModes(input: CompareModesInput): Promise<CompareModesReport> {
  if (input.models.length === 0) throw new ValidationError('compare-modes needs at least one model', [{ path: 'models', message: 'empty' }]);
  const ids = input.models.map((m) => m.id);
  if (new Set(ids).size !== ids.length) throw new ValidationError(`a model is named twice: ${ids.join(', ')}`, [{ path: 'models', message: 'duplicate' }]);
  const taskIds = input.tasks.map((t) => t.task.id);
  const comparisons: ModelComparison[] = [];
  for (const model of input.models) {
    const runId = modelRunId(input.runId, model.id);
    if (input.run !== false) {
      for (const mode of HARNESS_MODES) {
        await runEval({
          runId,
          tasks: input.tasks,
          mode,
          attempts: input.attempts,
          concurrency: input.concurrency,
          model,
          ...(input.userModel ? { userModel: input.userModel } : {}),
          provider: input.provider,
          ports: input.ports,
          ...(input.grade ? { grade: input.grade } : {}),
          ...(input.retry ? { retry: input.retry } : {}),
          ...(input.policy ? { policy: input.policy } : {}),
          ...(input.now ? { now: input.now } : {}),
          onProgress: (event) => input.onProgress?.({ ...event, model: model.id, mode }),
        });
      }
    }
    const records = await listAttemptRecords(input.ports.records, runId);
    comparisons.push(
      compareRecords(records, {
        runId,
        model: model.id,
        taskIds,
        attempts: input.attempts,
        ...(input.bootstrap?.resamples ? { resamples: input.bootstrap.resamples } : {}),
        ...(input.bootstrap?.seed !== undefined ? { seed: input.bootstrap.seed } : {}),
      }),
    );
  }
  const report: CompareModesReport = {
    version: COMPARE_MODES_VERSION,
    runId: input.runId,
    tasks: taskIds.length,
    attemptsPerTask: input.attempts,
    models: comparisons,
    generatedAt: (input.now ?? (() => new Date()))().toISOString(),
  };
  await input.ports.records.put(compareModesRecord.encode({ kind: 'eval-compare-modes', ...report }));
  return report;
}
