/**
 * The judge registry's shapes: what is stored (a judge's head, each version, its calibration reports), what the API
 * takes and answers. The schemas are the types.
 */
import { z } from 'zod';
import { DecodingSchema, JUDGE_NAME_PATTERN, JudgeDefinitionSchema, JudgeKindSchema, JudgeRefSchema } from '../judge-identity.ts';
import { AcceptanceRuleSchema, CalibrationReportSchema } from '../schemas.ts';

/**
 * - `candidate`: registered, not (yet) serving;
 * - `promoted`: the version a bare judge name resolves to (one per name at a time);
 * - `demoted`: was promoted, no longer (the drift watch demoted it, or a newer version replaced it);
 * - `retired`: never to be promoted again.
 */
export const JUDGE_STATUSES = ['candidate', 'promoted', 'demoted', 'retired'] as const;
export const JudgeStatusSchema = z.enum(JUDGE_STATUSES);
export type JudgeStatus = z.infer<typeof JudgeStatusSchema>;

export const JudgeNameSchema = z.string().regex(JUDGE_NAME_PATTERN, 'lower-case letters, digits, . _ - (at most 64)');
export const JudgeVersionSchema = z.string().regex(/^[0-9a-f]{12}$/, '12 hex characters');

/** Everything a version's hash covers, as `judgeIdentity` computes it. */
export const JudgeIdentitySchema = z.object({
  name: z.string(),
  version: z.string(),
  kind: JudgeKindSchema,
  model: z.string(),
  promptHash: z.string(),
  rubricHash: z.string(),
  outputSchemaHash: z.string(),
  decoding: DecodingSchema,
  taxonomyVersion: z.number().int().optional(),
  derivedFrom: z.object({ checkpoint: z.string().optional(), teacher: z.string().optional() }).optional(),
});

export const AcceptanceDecisionSchema = z.object({ accepted: z.boolean(), reasons: z.array(z.string()) });

/** How a version came to be promoted: the gate's decision, and whether an admin forced it past a refusal. */
export const PromotionSchema = z.object({
  at: z.string(),
  by: z.string(),
  forced: z.boolean(),
  reason: z.string().optional(),
  decision: AcceptanceDecisionSchema,
  /** The calibration report the gate read (absent when forced without one). */
  calibrationId: z.string().optional(),
  /** The version it replaced. */
  replaced: z.string().optional(),
});

export const StatusChangeSchema = z.object({ at: z.string(), reason: z.string(), by: z.string().optional() });

/** A judge name's head: one per name. `revision` changes on every write; writers condition on it. */
export const JudgeHeadSchema = z.object({
  name: z.string(),
  kind: JudgeKindSchema,
  acceptanceRule: AcceptanceRuleSchema,
  promoted: z.string().optional(),
  promotedAt: z.string().optional(),
  latestVersion: z.string(),
  versions: z.number().int().nonnegative(),
  revision: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type JudgeHead = z.output<typeof JudgeHeadSchema>;

/** One version: the full definition, its identity, and where it stands. */
export const JudgeVersionRecordSchema = z.object({
  name: z.string(),
  version: z.string(),
  status: JudgeStatusSchema,
  identity: JudgeIdentitySchema,
  definition: JudgeDefinitionSchema,
  registeredAt: z.string(),
  registeredBy: z.string().optional(),
  promotion: PromotionSchema.optional(),
  demotion: StatusChangeSchema.optional(),
  retirement: StatusChangeSchema.optional(),
});
export type JudgeVersionRecord = z.output<typeof JudgeVersionRecordSchema>;

/** A version as the API shows it (its status read against the head: only the head's promoted version is `promoted`). */
export const JudgeVersionView = JudgeVersionRecordSchema;
export type JudgeVersionView = JudgeVersionRecord;

/** The figures of a calibration report a judge's page shows. */
export const CalibrationSummarySchema = z.object({
  id: z.string(),
  goldSet: z.string(),
  createdAt: z.string(),
  criteria: z.array(z.object({ id: z.string(), n: z.number(), kappa: z.object({ estimate: z.number(), low: z.number(), high: z.number() }) })),
  costPerVerdictUsd: z.number().optional(),
});
export type CalibrationSummary = z.output<typeof CalibrationSummarySchema>;

export const JudgeSummarySchema = JudgeHeadSchema.omit({ revision: true });
export type JudgeSummary = z.output<typeof JudgeSummarySchema>;

export const JudgeDetailSchema = JudgeSummarySchema.extend({
  versions: z.array(JudgeVersionRecordSchema.extend({ latestCalibration: CalibrationSummarySchema.optional() })),
  versionCount: z.number().int(),
});
export type JudgeDetail = z.output<typeof JudgeDetailSchema>;

export const JudgeListSchema = z.object({ items: z.array(JudgeSummarySchema), cursor: z.string().optional() });
export const CalibrationListSchema = z.object({ items: z.array(CalibrationReportSchema), cursor: z.string().optional() });

// ---- inputs ----

/** `POST /v1/judges`: a judge definition, plus the acceptance rule that gates its promotions (kept per judge name). */
export const RegisterJudgeInputSchema = JudgeDefinitionSchema.extend({
  acceptanceRule: AcceptanceRuleSchema.optional(),
  by: z.string().min(1).max(200).optional(),
});
export type RegisterJudgeInput = z.input<typeof RegisterJudgeInputSchema>;

export const RegisterJudgeResultSchema = z.object({ judge: JudgeVersionRecordSchema, ref: JudgeRefSchema, created: z.boolean(), acceptanceRule: AcceptanceRuleSchema });

export const PromoteJudgeBodySchema = z.strictObject({
  version: JudgeVersionSchema,
  force: z.boolean().optional(),
  reason: z.string().min(1).max(2000).optional(),
  by: z.string().min(1).max(200).optional(),
});
export const PromoteJudgeResultSchema = z.object({
  judge: JudgeVersionRecordSchema,
  changed: z.boolean(),
  decision: AcceptanceDecisionSchema,
  previous: JudgeRefSchema.optional(),
});

export const RetireJudgeBodySchema = z.strictObject({
  version: JudgeVersionSchema,
  reason: z.string().min(1).max(2000).optional(),
  by: z.string().min(1).max(200).optional(),
});
export const StatusChangeResultSchema = z.object({ judge: JudgeVersionRecordSchema, changed: z.boolean() });

export const JudgeNameParams = z.strictObject({ name: JudgeNameSchema });
export const ListJudgesQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).optional(), cursor: z.string().optional() });
export const ListCalibrationsQuery = z.strictObject({
  version: JudgeVersionSchema.optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().optional(),
});
