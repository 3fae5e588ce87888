/**
 * Calibrates one judge version against people: runs the judge over every labelled item of a gold set (bounded
 * concurrency), a deterministic sample of them again (test–retest), every pair again with a and b swapped (position
 * swap), builds the calibration report (`lib/judges/calibration/`) and stores it in the judge registry. Whatever the
 * judge's kind: it is handed a `JudgeRunner`. `failureModeJudgeRunner` is the runner of the failure-mode chain's judge.
 */
import { createHash } from 'node:crypto';
import { FlywheelError, ValidationError } from '../errors.ts';
import { judgeSignal } from '../modes/judge-signal.ts';
import { loadSignalByKey, readSignalTrajectory } from '../modes/signal.ts';
import type { Taxonomy } from '../modes/taxonomy/taxonomy.ts';
import { ensureTaxonomy, loadTaxonomy } from '../modes/taxonomy/taxonomy-store.ts';
import type { ModelsPort } from '../ports/models.ts';
import type { Ports } from '../ports/ports.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { inFraction, MODE_LABEL_PREFIX } from './annotation/annotation-item.ts';
import { readGoldItems } from './annotation/gold-sets.ts';
import { buildCalibrationReport } from './calibration/build-calibration-report.ts';
import { judgeRefString, type JudgeRef } from './judge-identity.ts';
import { saveCalibrationReport } from './registry/calibrations.ts';
import type { CalibrationReport, GoldItem, JudgeLabels, JudgeRunner, Subject } from './schemas.ts';

/** The names of calibration's own errors. */
export const CalibrationErrorNames = { noVerdict: 'Flywheel.JudgeNoVerdictError' } as const;

/**
 * A judge gave no valid verdict on a subject (after its own retries): the item counts as unanswered in the report's
 * coverage. The only error `calibrateJudge` swallows; a runner that wants an item counted unanswered throws this.
 */
export class JudgeNoVerdictError extends FlywheelError {
  constructor(message: string) {
    super(CalibrationErrorNames.noVerdict, message);
  }
}

/** The share of gold items judged twice for test–retest, by default. */
export const DEFAULT_RETEST_FRACTION = 0.2;
/** Judge calls in flight at once, by default. */
export const DEFAULT_CALIBRATION_CONCURRENCY = 8;

export interface CalibrateJudgeInput {
  judge: JudgeRef;
  goldSet: string;
  run: JudgeRunner;
  /** Share of gold items judged a second time (chosen by hash of the item and the seed). Default 0.2; 0: none. */
  retestFraction?: number;
  concurrency?: number;
  /** Seed of the retest sample and the bootstrap. Default 1. */
  seed?: number;
  /** Bootstrap resamples (default the report's). */
  resamples?: number;
}

/**
 * @example
 * const report = await calibrateJudge(ports, {
 *   judge: { name: 'fm-judge', version: '3f2a9c0d1e2b' }, goldSet: 'fm-gold',
 *   run: failureModeJudgeRunner(ports, { model: judgeModel }),
 * });
 * report.criteria.map((c) => [c.id, c.kappa.low]);
 * @throws ValidationError naming `goldSet` when it has no labelled items, or `judge` when the judge answered none;
 *   whatever the runner throws other than `JudgeNoVerdictError` (`ModelUnavailableError` / `ModelRequestError` from
 *   the models port, a `ValidationError` for a subject it cannot load) — an infrastructure error is not a missing verdict.
 */
export async function calibrateJudge(ports: Pick<Ports, 'records' | 'now'>, input: CalibrateJudgeInput): Promise<CalibrationReport> {
  const items = await readGoldItems(ports, input.goldSet);
  if (items.length === 0) throw new ValidationError(`Gold set ${input.goldSet} has no labelled items yet`, [{ path: 'goldSet', message: 'no labelled items' }]);
  const seed = input.seed ?? 1;
  const concurrency = input.concurrency ?? DEFAULT_CALIBRATION_CONCURRENCY;
  const retestFraction = input.retestFraction ?? DEFAULT_RETEST_FRACTION;
  const errors: unknown[] = [];
  const runAll = async (subset: readonly GoldItem[], subjectOf: (item: GoldItem) => Subject): Promise<Map<string, JudgeLabels>> => {
    const out = new Map<string, JudgeLabels>();
    let failed = false;
    await forEachLimited(subset, concurrency, async (item) => {
      if (failed) return; // one infrastructure error fails the run: no more calls to a judge that is down
      try {
        out.set(item.id, await input.run(subjectOf(item)));
      } catch (error) {
        // Only a verdict the judge could not give is unanswered (counted in the report's coverage). Anything else —
        // the model endpoint down (ModelUnavailableError, which the state machine retries), a request it refused
        // (ModelRequestError), a store error, a missing subject — is not the judge's answer and fails the calibration.
        if (!(error instanceof JudgeNoVerdictError)) {
          failed = true;
          throw error;
        }
        errors.push(error);
      }
    });
    return out;
  };
  const verdicts = await runAll(items, (i) => i.subject);
  if (verdicts.size === 0) {
    throw new ValidationError(`Judge ${judgeRefString(input.judge)} gave no verdict on gold set ${input.goldSet}: ${String((errors[0] as Error | undefined)?.message ?? errors[0])}`, [
      { path: 'judge', message: 'no verdict' },
    ]);
  }
  const retestItems = retestFraction > 0 ? items.filter((i) => verdicts.has(i.id) && inFraction(`${seed}\n${i.id}`, retestFraction)) : [];
  const retest = retestItems.length > 0 ? await runAll(retestItems, (i) => i.subject) : undefined;
  const pairs = items.filter((i) => i.subject.kind === 'pair' && verdicts.has(i.id));
  const swapped = pairs.length > 0 ? await runAll(pairs, (i) => swap(i.subject)) : undefined;
  const createdAt = ports.now().toISOString();
  const id = `cal-${createHash('sha256').update(`${judgeRefString(input.judge)}\n${input.goldSet}\n${createdAt}`).digest('hex').slice(0, 16)}`;
  const report = buildCalibrationReport({
    id,
    judge: input.judge,
    goldSet: input.goldSet,
    createdAt,
    items,
    verdicts,
    ...(retest ? { retest } : {}),
    ...(swapped ? { swapped } : {}),
    seed,
    ...(input.resamples !== undefined ? { resamples: input.resamples } : {}),
  });
  return (await saveCalibrationReport(ports, report)).report;
}

function swap(subject: Subject): Subject {
  return subject.kind === 'pair' ? { kind: 'pair', a: subject.b, b: subject.a } : subject;
}

export interface FailureModeRunnerOptions {
  /** The judge model (the models port of `FLYWHEEL_JUDGE_MODEL`). */
  model: ModelsPort;
  /** The taxonomy version the judge labels with; default the current one. */
  taxonomyVersion?: number;
  maxAttempts?: number;
}


/**
 * The failure-mode chain's judge (`judgeSignal`) as a `JudgeRunner`: on a signal subject it answers `mode:<id>` →
 * `yes`/`no` for every mode of the taxonomy. A judge that gives no valid answer after its retries throws `JudgeNoVerdictError` (the item is
 * left out of the report); a subject that is not a signal is a `ValidationError`.
 *
 * @example
 * const run = failureModeJudgeRunner(ports, { model: openAiCompatibleModel({ baseUrl, model: 'qwen' }) });
 * await run({ kind: 'signal', signalKey: 'feedback:e1' }); // { labels: { 'mode:scope-calibration': 'yes', … }, latencyMs: 812 }
 */
export function failureModeJudgeRunner(ports: Pick<Ports, 'records' | 'blobs'>, options: FailureModeRunnerOptions): JudgeRunner {
  let taxonomy: Promise<Taxonomy> | undefined;
  return async (subject) => {
    if (subject.kind !== 'signal') throw new ValidationError(`The failure-mode judge labels signals, not ${subject.kind}s`, [{ path: 'subject.kind', message: 'must be signal' }]);
    taxonomy ??= options.taxonomyVersion !== undefined ? loadTaxonomy(ports.records, options.taxonomyVersion) : ensureTaxonomy(ports.records);
    const tax = await taxonomy;
    const signal = await loadSignalByKey(ports, subject.signalKey);
    if (!signal) throw new ValidationError(`No stored signal ${subject.signalKey}`, [{ path: 'subject.signalKey', message: 'not stored' }]);
    const trajectory = signal.trajectoryKey ? await readSignalTrajectory(ports.blobs, signal.trajectoryKey) : undefined;
    const started = performance.now();
    const result = await judgeSignal(
      options.model,
      tax,
      {
        ...(signal.text !== undefined ? { comment: signal.text } : {}),
        ...(trajectory !== undefined ? { trajectory } : {}),
        rating: signal.rating,
        ...(signal.outcome ? { outcome: signal.outcome } : {}),
        signalKind: signal.signalKind,
      },
      options.maxAttempts,
    );
    const latencyMs = performance.now() - started;
    if (!result.ok) throw new JudgeNoVerdictError(`failure-mode judge gave no valid answer on ${subject.signalKey} (${result.reason}: ${result.message})`);
    const named = new Set(result.verdict.modes.map((m) => m.mode));
    const labels: Record<string, string> = {};
    for (const mode of tax.modes) labels[`${MODE_LABEL_PREFIX}${mode.id}`] = named.has(mode.id) ? 'yes' : 'no';
    return { labels, latencyMs };
  };
}

