/**
 * The shapes the judges capability shares between its parts: a verdict on one criterion, a judgement of one attempt,
 * a calibration report of one judge version, and the acceptance rule that gates promotion. The schemas are the types.
 */
import { z } from 'zod';
import { JudgeRefSchema } from './judge-identity.ts';

/** `pass`/`fail` on a criterion; `not-applicable` when the attempt gives the criterion nothing to judge. */
export const CRITERION_VERDICTS = ['pass', 'fail', 'not-applicable'] as const;
export const CriterionVerdictValueSchema = z.enum(CRITERION_VERDICTS);

/** Where a quote was taken from; each is checked to occur in that part of the attempt. */
export const EVIDENCE_SOURCES = ['instruction', 'trajectory', 'diff', 'final-message', 'tests', 'service-calls'] as const;
export const EvidenceSourceSchema = z.enum(EVIDENCE_SOURCES);

export const EvidenceSchema = z.strictObject({ source: EvidenceSourceSchema, quote: z.string().max(4000) });
export type Evidence = z.infer<typeof EvidenceSchema>;

/** One criterion's verdict. A verdict whose quote does not occur in the attempt is `voided` and scores nothing. */
export const CriterionResultSchema = z.strictObject({
  id: z.string(),
  verdict: CriterionVerdictValueSchema,
  /** 1 for pass, 0 for fail (or the judge's graded score in [0, 1]); absent when voided or not applicable. */
  score: z.number().min(0).max(1).optional(),
  reason: z.string().max(4000),
  evidence: z.array(EvidenceSchema).max(8),
  /** Why the verdict was voided (a quote that is not in the attempt, no answer after the retries, the budget spent). */
  voided: z.string().optional(),
});
export type CriterionResult = z.infer<typeof CriterionResultSchema>;

/** What a rubric judge says about one attempt. */
export const JudgementSchema = z.strictObject({
  judge: JudgeRefSchema,
  criteria: z.array(CriterionResultSchema),
  /** Weighted mean of the scored criteria in [0, 1]; a voided criterion counts as 0 (it could not be shown to pass). */
  score: z.number().min(0).max(1),
  /** Model calls made (retries included). */
  calls: z.number().int().nonnegative(),
  usage: z.strictObject({ promptTokens: z.number(), completionTokens: z.number() }),
  costUsd: z.number().nonnegative().optional(),
  latencyMs: z.number().nonnegative(),
  /** True when every criterion got a checked verdict; false when one was voided. */
  complete: z.boolean(),
});
export type Judgement = z.infer<typeof JudgementSchema>;

const Interval = z.strictObject({ estimate: z.number(), low: z.number(), high: z.number() });
export type Interval = z.infer<typeof Interval>;
export const IntervalSchema = Interval;

/** Agreement on one criterion (or on the pairwise choice, id `preference`, or a mode, id `mode:<id>`). */
export const CriterionAgreementSchema = z.strictObject({
  id: z.string(),
  n: z.number().int().nonnegative(),
  /** Cohen's kappa (judge vs the gold label) with a bootstrap 95% interval. */
  kappa: Interval,
  /** Krippendorff's alpha (nominal) with a bootstrap 95% interval. */
  alpha: Interval,
  accuracy: z.number(),
  /** Per class: precision and recall of the judge against the gold labels. */
  perClass: z.record(z.string(), z.strictObject({ precision: z.number().nullable(), recall: z.number().nullable(), support: z.number().int() })),
  /** labels × labels, rows the gold label, columns the judge's. */
  confusion: z.strictObject({ labels: z.array(z.string()), matrix: z.array(z.array(z.number().int())) }),
  /** Kappa between two people on the double-labelled slice: the ceiling a judge can be held to. */
  humanCeiling: Interval.optional(),
  /**
   * Set when kappa and alpha are undefined (judge and gold use one and the same class on every item, so chance
   * agreement is 1; scikit-learn answers NaN): `kappa` and `alpha` then read 0 with a zero-width interval, and the
   * acceptance rule refuses the criterion whatever its thresholds.
   */
  kappaUndefined: z.string().optional(),
  /** Gold items that carry this label id (answered or not); `n` of them got the judge's verdict on it. */
  goldItems: z.number().int().nonnegative().optional(),
  /** `n ÷ goldItems`: the share of this label id's gold items the judge answered (0 when there are none). */
  coverage: z.number().min(0).max(1).optional(),
  /** The share of bootstrap resamples on which kappa is defined: the interval rests on these only. */
  bootstrapDefined: z.number().min(0).max(1).optional(),
});
export type CriterionAgreement = z.infer<typeof CriterionAgreementSchema>;

export const CalibrationReportSchema = z.strictObject({
  id: z.string(),
  judge: JudgeRefSchema,
  goldSet: z.string(),
  createdAt: z.string(),
  /** Resamples of the bootstrap, and its seed (the report is reproducible). */
  bootstrap: z.strictObject({ resamples: z.number().int().positive(), seed: z.number().int() }),
  criteria: z.array(CriterionAgreementSchema),
  /**
   * Coverage of the gold set: gold items, those the judge answered (a verdict with at least one label), and the share.
   * A verdict the judge could not give (voided, no valid answer) is unanswered, never left out silently.
   */
  coverage: z.strictObject({ goldItems: z.number().int().nonnegative(), answered: z.number().int().nonnegative(), share: z.number().min(0).max(1) }).optional(),
  /**
   * The same items judged twice: the share of identical verdicts over every (item, label id) both runs gave, and
   * kappa between the two runs computed per label id then averaged over the ids whose kappa is defined (`null` when
   * none is); `perLabel` holds each id's figures.
   */
  testRetest: z
    .strictObject({
      n: z.number().int(),
      agreement: z.number(),
      kappa: z.number().nullable(),
      perLabel: z.record(z.string(), z.strictObject({ n: z.number().int(), agreement: z.number(), kappa: z.number().nullable() })).optional(),
    })
    .optional(),
  /** Pairwise judges: the share of pairs whose choice survives swapping the two positions. */
  positionSwap: z.strictObject({ n: z.number().int(), consistency: z.number() }).optional(),
  /**
   * Length bias: the slope of a logistic regression of the judge's pass (or preference) on the standardised length
   * difference, minus the same slope for the gold labels. Near 0: no more swayed by length than people.
   */
  lengthBias: z.strictObject({ coefficient: z.number(), judgeSlope: z.number(), goldSlope: z.number() }).optional(),
  costPerVerdictUsd: z.number().nonnegative().optional(),
  latencyMs: z.strictObject({ p50: z.number(), p95: z.number() }).optional(),
});
export type CalibrationReport = z.infer<typeof CalibrationReportSchema>;

/**
 * The promotion gate: per criterion, the lower bound of the kappa interval is at least `minKappaLower`, and not
 * worse than the incumbent's estimate by more than `maxKappaDrop`; a derived judge must also cost less per verdict.
 */
export const AcceptanceRuleSchema = z.strictObject({
  minKappaLower: z.number().min(-1).max(1).default(0.6),
  maxKappaDrop: z.number().min(0).max(2).default(0),
  /** At least this many gold items per criterion, or the report cannot accept. */
  minItems: z.number().int().positive().default(30),
  /** The share of gold items (overall and per label id) the judge must have answered; unanswered items are evidence too. */
  minCoverage: z.number().min(0).max(1).default(0.95),
  /** Every gold class of a label id (a class people used) needs at least this many answered items. */
  minClassSupport: z.number().int().nonnegative().default(5),
  /** The share of bootstrap resamples on which kappa must be defined for its interval to count. */
  minDefinedResamples: z.number().min(0).max(1).default(0.95),
  requireCheaper: z.boolean().default(false),
});
export type AcceptanceRule = z.output<typeof AcceptanceRuleSchema>;
/** A rule as written (fields with a default may be left out). */
export type AcceptanceRuleInput = z.input<typeof AcceptanceRuleSchema>;

export interface AcceptanceDecision {
  accepted: boolean;
  /** One line per criterion or condition that failed (empty when accepted). */
  reasons: string[];
}

/** What a person (or a judge) is asked to label. Attempts are named by their eval run and attempt record key. */
export const AttemptSubjectSchema = z.strictObject({ kind: z.literal('attempt'), runId: z.string().min(1), attemptId: z.string().min(1) });
export const SubjectSchema = z.discriminatedUnion('kind', [
  AttemptSubjectSchema,
  z.strictObject({ kind: z.literal('signal'), signalKey: z.string().min(1) }),
  z.strictObject({ kind: z.literal('pair'), a: AttemptSubjectSchema, b: AttemptSubjectSchema }),
]);
export type Subject = z.infer<typeof SubjectSchema>;

/**
 * One item of a gold set: the subject and its gold labels, keyed by label id — a criterion id (`pass` / `fail` /
 * `not-applicable`), `preference` for a pair (`a` / `b` / `tie`), or `mode:<id>` for a signal (`yes` / `no`).
 * `secondLabels` is a second person's labels on the double-labelled slice (the human ceiling).
 */
export const GoldItemSchema = z.strictObject({
  id: z.string().min(1),
  subject: SubjectSchema,
  labels: z.record(z.string(), z.string()),
  secondLabels: z.record(z.string(), z.string()).optional(),
  annotators: z.array(z.string()),
  /** Characters of what is judged (final answer or diff; for a pair, a minus b): for the length-bias coefficient. */
  length: z.number().optional(),
});
export type GoldItem = z.infer<typeof GoldItemSchema>;

/** One judge's answer on one subject, in the same label vocabulary as a gold item. */
export interface JudgeLabels {
  labels: Record<string, string>;
  costUsd?: number;
  latencyMs: number;
}

/**
 * Runs one judge version on one subject (the rubric judge, the failure-mode judge, a pairwise judge, a reward model):
 * what calibration and the drift watch call, whatever the judge's kind.
 */
export type JudgeRunner = (subject: Subject) => Promise<JudgeLabels>;
