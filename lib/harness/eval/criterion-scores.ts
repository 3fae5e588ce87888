/**
 * Per-criterion scores of judge-graded attempts: for each rubric criterion, how many attempts the judge scored, passed,
 * failed, found not applicable or voided, and the pass rate (passed over judged minus not-applicable; a voided
 * verdict counts against it: it could not be shown to pass). Read from `grade.judgement` of attempt records; records
 * without one (graded by tests alone, ungraded) are left out.
 */
import { z } from 'zod';
import { JudgementSchema, type Judgement } from '../../judges/schemas.ts';
import type { AttemptRecord } from '../attempt/attempt-record.ts';

export const CriterionTallySchema = z.object({
  judged: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  notApplicable: z.number().int(),
  voided: z.number().int(),
  /** passed / (judged − notApplicable); null when nothing was scored. */
  passRate: z.number().nullable(),
});
export type CriterionTally = z.infer<typeof CriterionTallySchema>;

/** Tallies keyed by criterion id (or `taskId:criterionId` over many tasks). */
export const CriterionScoresSchema = z.record(z.string(), CriterionTallySchema);
export type CriterionScores = z.infer<typeof CriterionScoresSchema>;

/** The judgement stored on an attempt's grade, when there is a valid one. */
export function judgementOf(record: Pick<AttemptRecord, 'grade'>): Judgement | undefined {
  const raw = record.grade?.['judgement'];
  if (raw === undefined) return undefined;
  const r = JudgementSchema.safeParse(raw);
  return r.success ? r.data : undefined;
}

function empty(): CriterionTally {
  return { judged: 0, passed: 0, failed: 0, notApplicable: 0, voided: 0, passRate: null };
}

/**
 * @example
 * criterionScores(records); // { c1: { judged: 5, passed: 4, failed: 1, notApplicable: 0, voided: 0, passRate: 0.8 } }
 * criterionScores(records, { byTask: true }); // { 'fm-1a2b:c1': {…} }
 */
export function criterionScores(records: readonly Pick<AttemptRecord, 'grade' | 'taskId'>[], options: { byTask?: boolean } = {}): CriterionScores {
  const out: CriterionScores = {};
  for (const r of records) {
    const j = judgementOf(r);
    if (!j) continue;
    for (const c of j.criteria) {
      const key = options.byTask ? `${r.taskId}:${c.id}` : c.id;
      const t = (out[key] ??= empty());
      t.judged++;
      if (c.voided !== undefined) t.voided++;
      else if (c.verdict === 'pass') t.passed++;
      else if (c.verdict === 'fail') t.failed++;
      else t.notApplicable++;
    }
  }
  return withPassRates(out);
}

/** Fills each tally's pass rate: passed over the criteria that were scored (not-applicable left out). */
function withPassRates(out: CriterionScores): CriterionScores {
  for (const t of Object.values(out)) {
    const scored = t.judged - t.notApplicable;
    t.passRate = scored > 0 ? t.passed / scored : null;
  }
  return out;
}

/** Mean judge score over the records that carry a judgement; null when none does. */
export function meanJudgeScore(records: readonly Pick<AttemptRecord, 'grade'>[]): number | null {
  const scores = records.flatMap((r) => {
    const j = judgementOf(r);
    return j ? [j.score] : [];
  });
  return scores.length === 0 ? null : scores.reduce((a, b) => a + b, 0) / scores.length;
}

/** Sums tallies (of shards, of runs) key by key; pass rates are recomputed from the sums. */
export function mergeCriterionScores(many: readonly (CriterionScores | undefined)[]): CriterionScores {
  const out: CriterionScores = {};
  for (const scores of many) {
    for (const [key, t] of Object.entries(scores ?? {})) {
      const o = (out[key] ??= empty());
      o.judged += t.judged;
      o.passed += t.passed;
      o.failed += t.failed;
      o.notApplicable += t.notApplicable;
      o.voided += t.voided;
    }
  }
  return withPassRates(out);
}

/**
 * What a group of judged attempts says (a sweep shard's part, a cell): how many were judged, their mean rubric score,
 * and each criterion's tally keyed `taskId:criterionId`.
 */
export const JudgeSummarySchema = z.object({
  attempts: z.number().int(),
  /** Sum of the attempts' scores (summable across shards); the mean is `scoreSum / attempts`. */
  scoreSum: z.number(),
  meanScore: z.number().nullable(),
  criteria: CriterionScoresSchema,
});
export type JudgeSummary = z.infer<typeof JudgeSummarySchema>;

/** The judge summary of attempt records; undefined when none carries a judgement. */
export function judgeSummary(records: readonly Pick<AttemptRecord, 'grade' | 'taskId'>[]): JudgeSummary | undefined {
  let scoreSum = 0;
  const judged = records.filter((r) => {
    const j = judgementOf(r);
    if (j) scoreSum += j.score;
    return j !== undefined;
  });
  if (judged.length === 0) return undefined;
  return { attempts: judged.length, scoreSum, meanScore: scoreSum / judged.length, criteria: criterionScores(judged, { byTask: true }) };
}

/** Merges judge summaries (a cell's from its shards' parts); undefined when none has one. */
export function mergeJudgeSummaries(many: readonly (JudgeSummary | undefined)[]): JudgeSummary | undefined {
  const present = many.filter((s): s is JudgeSummary => s !== undefined);
  if (present.length === 0) return undefined;
  const attempts = present.reduce((a, s) => a + s.attempts, 0);
  const scoreSum = present.reduce((a, s) => a + s.scoreSum, 0);
  return { attempts, scoreSum, meanScore: attempts > 0 ? scoreSum / attempts : null, criteria: mergeCriterionScores(present.map((s) => s.criteria)) };
}
