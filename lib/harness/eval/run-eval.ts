import type { BlobsPort } from '../../ports/blobs.ts';
import type { ModelsPort } from '../../ports/models.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { ValidationError } from '../../errors.ts';
import { evalAttemptId, FINISHED_STATUSES, type AttemptRecord, type AttemptStatus, type AttemptTry } from '../attempt/attempt-record.ts';
import { getAttemptRecord, listAttemptRecords } from '../attempt/read-attempt-records.ts';
import { ungradableReason } from '../attempt/harness-grader.ts';
import { runAttempt, type AttemptGrader, type AttemptRetryPolicy } from '../attempt/run-attempt.ts';
import type { SandboxProvider } from '../sandbox/sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';
import { criterionScores, judgementOf, meanJudgeScore } from './criterion-scores.ts';
import type { EvalResults, TaskResult } from './eval-results.ts';
import type { SuiteTask } from './load-suite.ts';
import { passAtK } from './pass-at-k.ts';
import { evalResultsRecord, evalRunRecord } from './record-codecs.ts';

/**
 * Runs a suite: every task × `attempts` attempts in one harness mode, `concurrency` at a time.
 *
 * It resumes: an attempt whose record is already finished (passed, failed, ungraded) is skipped, so running again
 * with the same run id after a crash or Ctrl-C continues where it stopped. An attempt that ended as an
 * infrastructure error is run again (its earlier tries stay in its history). Results are computed from the records
 * of the whole run, skipped attempts included.
 *
 * @example
 * const results = await runEval({ runId: 'nightly-1', tasks: await loadSuite('suites/smoke'), mode: 'strict', attempts: 5,
 *   concurrency: 4, model: adaptiveConcurrency(createModel(spec)), userModel: createModel(userSpec), provider, ports,
 *   grade: harnessGrader({ provider, blobs: ports.blobs, records: ports.records, judge: { model: createModel(judgeSpec) } }) });
 * console.log(results.passAt1, results.passAtK);
 */
export interface RunEvalInput {
  runId: string;
  tasks: SuiteTask[];
  mode: HarnessMode;
  /** Attempts per task (the k of pass@k). */
  attempts: number;
  concurrency: number;
  model: ModelsPort;
  /**
   * The model that plays the simulated user of behavioural cases (`task.behaviour.simulatedUser`), passed to every
   * attempt. Without it such a case ends as an infrastructure error (a configuration error, never the agent's fault).
   */
  userModel?: ModelsPort;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  grade?: AttemptGrader;
  policy?: { checkpoint: string; weightVersion?: string | number };
  retry?: Partial<AttemptRetryPolicy>;
  onProgress?: (event: EvalProgress) => void;
  now?: () => Date;
}

export type EvalProgress =
  | { type: 'skipped'; taskId: string; n: number; status: AttemptStatus; done: number; total: number }
  | { type: 'started'; taskId: string; n: number; done: number; total: number }
  | { type: 'try-failed'; taskId: string; n: number; attempt: AttemptTry }
  | { type: 'finished'; taskId: string; n: number; record: AttemptRecord; done: number; total: number };

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Results from the records of a run (the same function serves a finished, a resumed and a crashed run). */
export function summarizeAttempts(
  records: AttemptRecord[],
  meta: {
    runId: string;
    mode: HarnessMode;
    model: string;
    attemptsPerTask: number;
    concurrency: number;
    taskIds: string[];
    ran: number;
    skipped: number;
    startedAt: Date;
    finishedAt: Date;
    /** Why tasks were left ungraded, by task id (`ungradableReason`). */
    ungraded?: Record<string, string>;
  },
): EvalResults {
  const mine = records.filter((r) => r.mode === meta.mode && meta.taskIds.includes(r.taskId) && r.n < meta.attemptsPerTask);
  const counts: Record<AttemptStatus, number> = { passed: 0, failed: 0, ungraded: 0, 'infrastructure-error': 0 };
  const tokens = { prompt: 0, completion: 0, cached: 0, total: 0 };
  let attemptTimeMs = 0;
  for (const r of mine) {
    counts[r.status]++;
    tokens.prompt += r.usageAllTries.promptTokens;
    tokens.completion += r.usageAllTries.completionTokens;
    tokens.cached += r.usageAllTries.cachedTokens;
    attemptTimeMs += r.durationMs;
  }
  tokens.total = tokens.prompt + tokens.completion;
  const k = meta.attemptsPerTask;
  const perTask: TaskResult[] = meta.taskIds.map((taskId) => {
    const rs = mine.filter((r) => r.taskId === taskId);
    const passed = rs.filter((r) => r.status === 'passed').length;
    const failed = rs.filter((r) => r.status === 'failed').length;
    const scored = passed + failed;
    const judged = rs.filter((r) => judgementOf(r) !== undefined);
    const ungradedReason = meta.ungraded?.[taskId];
    return {
      taskId,
      scored,
      passed,
      failed,
      ungraded: rs.filter((r) => r.status === 'ungraded').length,
      infrastructureErrors: rs.filter((r) => r.status === 'infrastructure-error').length,
      passAt1: scored >= 1 ? passAtK(scored, passed, 1) : null,
      passAtK: scored >= k ? passAtK(scored, passed, k) : null,
      ...(ungradedReason !== undefined ? { ungradedReason } : {}),
      ...(judged.length > 0 ? { judgeScore: meanJudgeScore(judged), criteria: criterionScores(judged) } : {}),
    };
  });
  const atK = perTask.flatMap((t) => (t.passAtK === null ? [] : [t.passAtK]));
  return {
    runId: meta.runId,
    mode: meta.mode,
    model: meta.model,
    attemptsPerTask: k,
    concurrency: meta.concurrency,
    tasks: meta.taskIds.length,
    ran: meta.ran,
    skipped: meta.skipped,
    counts,
    passAt1: mean(perTask.flatMap((t) => (t.passAt1 === null ? [] : [t.passAt1]))),
    passAtK: { k, value: mean(atK), tasks: atK.length },
    tokens,
    wallTimeMs: meta.finishedAt.getTime() - meta.startedAt.getTime(),
    attemptTimeMs,
    perTask,
    startedAt: meta.startedAt.toISOString(),
    finishedAt: meta.finishedAt.toISOString(),
  };
}

export async function runEval(input: RunEvalInput): Promise<EvalResults> {
  const now = input.now ?? (() => new Date());
  if (!Number.isInteger(input.attempts) || input.attempts < 1) throw new ValidationError('attempts must be a positive integer', [{ path: 'attempts', message: 'positive integer' }]);
  if (!Number.isInteger(input.concurrency) || input.concurrency < 1) throw new ValidationError('concurrency must be a positive integer', [{ path: 'concurrency', message: 'positive integer' }]);
  const startedAt = now();
  // A task the grader cannot grade (judge-graded, no judge) runs ungraded: never passed, its diff kept for later.
  const ungraded: Record<string, string> = {};
  for (const { task } of input.tasks) {
    const why = await ungradableReason(input.grade, task);
    if (why !== undefined) ungraded[task.id] = why;
  }
  const work = input.tasks.flatMap((t) => Array.from({ length: input.attempts }, (_, n) => ({ ...t, n })));
  const total = work.length;
  let done = 0;
  let ran = 0;
  let skipped = 0;
  let next = 0;

  await input.ports.records.put(
    evalRunRecord.encode({
      kind: 'eval-run',
      runId: input.runId,
      mode: input.mode,
      model: input.model.id,
      attemptsPerTask: input.attempts,
      taskIds: input.tasks.map((t) => t.task.id),
      updatedAt: startedAt.toISOString(),
    }),
  );

  const worker = async () => {
    for (;;) {
      const item = work[next++];
      if (!item) return;
      const { task } = item;
      const existing = await getAttemptRecord(input.ports.records, input.runId, task.id, input.mode, item.n);
      if (existing && FINISHED_STATUSES.includes(existing.status)) {
        skipped++;
        done++;
        input.onProgress?.({ type: 'skipped', taskId: task.id, n: item.n, status: existing.status, done, total });
        continue;
      }
      input.onProgress?.({ type: 'started', taskId: task.id, n: item.n, done, total });
      const record = await runAttempt({
        runId: input.runId,
        n: item.n,
        task,
        sourceDir: item.sourceDir,
        mode: input.mode,
        model: input.model,
        ...(input.userModel ? { userModel: input.userModel } : {}),
        provider: input.provider,
        ports: input.ports,
        attemptId: evalAttemptId(input.runId, task.id, input.mode, item.n),
        ...(input.policy ? { policy: input.policy } : {}),
        ...(input.grade && ungraded[task.id] === undefined ? { grade: input.grade } : {}),
        ...(input.retry ? { retry: input.retry } : {}),
        ...(existing ? { priorHistory: existing.history, firstStartedAt: existing.startedAt } : {}),
        onTryFailed: (attempt) => input.onProgress?.({ type: 'try-failed', taskId: task.id, n: item.n, attempt }),
        ...(input.now ? { now: input.now } : {}),
      });
      ran++;
      done++;
      input.onProgress?.({ type: 'finished', taskId: task.id, n: item.n, record, done, total });
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency, Math.max(1, total)) }, worker));

  const records = await listAttemptRecords(input.ports.records, input.runId);
  const results = summarizeAttempts(records, {
    runId: input.runId,
    mode: input.mode,
    model: input.model.id,
    attemptsPerTask: input.attempts,
    concurrency: input.concurrency,
    taskIds: input.tasks.map((t) => t.task.id),
    ran,
    skipped,
    startedAt,
    finishedAt: now(),
    ungraded,
  });
  await input.ports.records.put(evalResultsRecord.encode({ kind: 'eval-results', ...results }));
  return results;
}
