/**
 * Difficulty calibration: k rollouts of a given model on each active task of a suite, through the harness's own eval
 * (`runEval`: strict sandbox, agent loop, grading), then each task keeps its pass rate. A band (default 10%–70%)
 * selects what is worth training on; a task the model solved every time is marked too easy. Infrastructure errors
 * are not scored: a task whose rollouts all broke keeps no pass rate.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobsPort } from '../ports/blobs.ts';
import type { ModelsPort } from '../ports/models.ts';
import type { RecordsPort } from '../ports/records.ts';
import { harnessGrader } from '../harness/attempt/harness-grader.ts';
import { loadSuite } from '../harness/eval/load-suite.ts';
import type { EvalResults } from '../harness/eval/eval-results.ts';
import { runEval } from '../harness/eval/run-eval.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { exportSuite, listSuiteTasks } from './forge-records.ts';
import { forgedTaskRecord, type ForgedTaskRecord } from './record-codecs.ts';
import { forgeTestRunner } from './forge-test-runner.ts';

export interface CalibrationOutcome {
  taskId: string;
  scored: number;
  passed: number;
  passRate: number | null;
  inBand: boolean;
  tooEasy: boolean;
}

export interface CalibrateInput {
  suite: string;
  model: ModelsPort;
  provider: SandboxProvider;
  ports: { records: RecordsPort; blobs: BlobsPort };
  /** Rollouts per task. */
  k: number;
  band?: [number, number];
  concurrency?: number;
  runId?: string;
  now?: () => Date;
}

/** The band check: inclusive at both ends. */
export function inBand(passRate: number, band: [number, number]): boolean {
  return passRate >= band[0] && passRate <= band[1];
}

/**
 * @example
 * const outcomes = await calibrateDifficulty({ suite: 'calc', model, provider, ports, k: 5, band: [0.1, 0.7] });
 * const trainable = outcomes.filter((o) => o.inBand);
 */
export async function calibrateDifficulty(input: CalibrateInput): Promise<{ outcomes: CalibrationOutcome[]; eval: EvalResults }> {
  const now = input.now ?? (() => new Date());
  const band = input.band ?? [0.1, 0.7];
  const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-calib-'));
  try {
    const dir = join(scratch, 'suite');
    await exportSuite(input.ports, { suite: input.suite, dir, reposDir: join(scratch, 'repos') });
    const tasks = (await loadSuite(dir)).filter((t) => !t.task.metadata.canary);
    const runId = input.runId ?? `calibrate-${input.suite}-${now().toISOString().replace(/[:.]/g, '-')}`;
    const records = new Map((await listSuiteTasks(input.ports.records, input.suite)).map((r) => [r.taskId, r]));
    const setupOf = tasks[0]?.task.setupCommand;
    const results = await runEval({
      runId,
      tasks,
      mode: 'strict',
      attempts: input.k,
      concurrency: input.concurrency ?? 1,
      model: input.model,
      provider: input.provider,
      ports: input.ports,
      grade: harnessGrader({ provider: input.provider, blobs: input.ports.blobs, runTests: forgeTestRunner(input.provider, setupOf ? { setupCommand: setupOf } : {}) }),
      retry: { maxTries: 2, baseDelayMs: 500, maxDelayMs: 5_000 },
    });
    const outcomes: CalibrationOutcome[] = [];
    for (const t of results.perTask) {
      const passRate = t.scored > 0 ? t.passed / t.scored : null;
      const o: CalibrationOutcome = { taskId: t.taskId, scored: t.scored, passed: t.passed, passRate, inBand: passRate !== null && inBand(passRate, band), tooEasy: passRate === 1 };
      outcomes.push(o);
      const record = records.get(t.taskId);
      if (!record) continue;
      const updated: ForgedTaskRecord = {
        ...record,
        ...(passRate !== null ? { passRate } : {}),
        calibration: { model: input.model.id, attempts: t.scored, passed: t.passed, band, inBand: o.inBand, tooEasy: o.tooEasy, at: now().toISOString(), runId },
        updatedAt: now().toISOString(),
      };
      await input.ports.records.put(forgedTaskRecord.encode(updated));
    }
    return { outcomes, eval: results };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
