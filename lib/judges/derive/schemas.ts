/**
 * The shapes of a judge derivation: what each step stores, and the report people read. The schemas are the types.
 */
import { z } from 'zod';
import { JudgeRefSchema } from '../judge-identity.ts';

const Decision = z.object({ accepted: z.boolean(), reasons: z.array(z.string()), promoted: z.boolean(), note: z.string().optional() });

/** Agreement of a student (the distilled judge) with its teacher on held-out teacher verdicts, per label. */
export const TeacherAgreementSchema = z.object({
  n: z.number().int().nonnegative(),
  /** True when nothing was held out and the agreement is measured on the training items. */
  inSample: z.boolean(),
  labels: z.array(z.object({ id: z.string(), n: z.number().int(), agreement: z.number().nullable(), kappa: z.number().nullable() })),
});
export type TeacherAgreement = z.infer<typeof TeacherAgreementSchema>;

/** What a calibration report says, in brief (the full report is in the judge registry under `calibrationId`). */
export const PeopleAgreementSchema = z.object({
  calibrationId: z.string(),
  goldSet: z.string(),
  criteria: z.array(z.object({ id: z.string(), n: z.number().int(), kappa: z.object({ estimate: z.number(), low: z.number(), high: z.number() }) })),
  costPerVerdictUsd: z.number().optional(),
});
export type PeopleAgreement = z.infer<typeof PeopleAgreementSchema>;

export const DerivedJudgeSchema = z.object({
  ref: JudgeRefSchema,
  people: PeopleAgreementSchema.optional(),
  teacher: TeacherAgreementSchema.optional(),
  costPerVerdictUsd: z.number().optional(),
  decision: Decision.optional(),
  /** The distilled judge: teacher verdicts it trained on, and gold items (none of them trained on) it was calibrated on. */
  trainedOn: z.number().int().nonnegative().optional(),
  calibratedOn: z.number().int().nonnegative().optional(),
});
export type DerivedJudge = z.infer<typeof DerivedJudgeSchema>;

/** One judge name's part of a derivation. */
export const DerivationJudgeSchema = z.object({
  kind: z.literal('derivation-judge'),
  derivationId: z.string(),
  name: z.string(),
  judgeKind: z.string(),
  goldSet: z.string(),
  incumbent: JudgeRefSchema.optional(),
  incumbentPeople: PeopleAgreementSchema.optional(),
  prompted: DerivedJudgeSchema.optional(),
  /** The student's form: one probability per label, or Bradley–Terry on pairs. */
  studentKind: z.enum(['pointwise', 'pairwise']).optional(),
  /**
   * The teacher's verdicts the student learnt from: on unlabelled production items only (`production`, of which `train`
   * trained it and `holdout` measure it against its teacher). The `gold` items are never trained on: the student is
   * calibrated against people on all of them (`distilled.calibratedOn`).
   */
  teacherItems: z.object({ gold: z.number().int(), production: z.number().int(), train: z.number().int(), holdout: z.number().int() }).optional(),
  distilled: DerivedJudgeSchema.optional(),
  /** Why this judge's derivation stopped early (a step's error after its retries). */
  failed: z.object({ error: z.string(), cause: z.string() }).optional(),
  updatedAt: z.string(),
});
export type DerivationJudge = z.infer<typeof DerivationJudgeSchema>;

/** A warning of a derivation: the judge name (or the checkpoint, for the top model) and what it means. */
export const DerivationWarningSchema = z.object({ name: z.string(), message: z.string() });

export const DerivationSchema = z.object({
  kind: z.literal('derivation'),
  derivationId: z.string(),
  checkpointId: z.string(),
  /** The models-port spec of the top checkpoint's serving endpoint (absent when it has none). */
  model: z.string().optional(),
  judges: z.array(z.object({ name: z.string(), goldSet: z.string() })),
  /** Judge names left out, and why (no gold set, no runner for the kind, no endpoint). */
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
  /** What keeps a planned judge's candidates from promotion whatever they measure (a model with no price). */
  warnings: z.array(DerivationWarningSchema).optional(),
  status: z.enum(['running', 'finished']),
  createdAt: z.string(),
  finishedAt: z.string().optional(),
  reportKey: z.string().optional(),
  promoted: z.array(JudgeRefSchema).optional(),
});
export type Derivation = z.infer<typeof DerivationSchema>;

/** `report.json`: the derivation, and each judge name's part with its candidates against teacher and people. */
export const DerivationReportSchema = z.object({
  derivationId: z.string(),
  checkpointId: z.string(),
  model: z.string().optional(),
  createdAt: z.string(),
  finishedAt: z.string(),
  warnings: z.array(DerivationWarningSchema).optional(),
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
  judges: z.array(DerivationJudgeSchema.omit({ kind: true })),
  promoted: z.array(JudgeRefSchema),
});
export type DerivationReport = z.infer<typeof DerivationReportSchema>;
