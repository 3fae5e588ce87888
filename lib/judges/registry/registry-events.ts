/**
 * The details of `judge.promoted` and `judge.demoted` (types in `lib/judges/events.ts`), published by the registry.
 * A subscriber (a grader's cache, the drift watch, people's notices) reads which version of which judge changed.
 */
import { z } from 'zod';
import { JudgeRefSchema } from '../judge-identity.ts';
import { AcceptanceDecisionSchema } from './schemas.ts';

export const JudgePromotedDetailSchema = z.strictObject({
  judge: JudgeRefSchema,
  /** The version it replaced, if one was promoted. */
  previous: JudgeRefSchema.optional(),
  by: z.string(),
  /** True when an admin promoted it past the acceptance rule's refusal; `reason` says why. */
  forced: z.boolean(),
  reason: z.string().optional(),
  decision: AcceptanceDecisionSchema,
  at: z.string(),
});
export type JudgePromotedDetail = z.infer<typeof JudgePromotedDetailSchema>;

export const JudgeDemotedDetailSchema = z.strictObject({
  judge: JudgeRefSchema,
  reason: z.string(),
  by: z.string().optional(),
  /** True when the version was retired (it will not be promoted again). */
  retired: z.boolean(),
  at: z.string(),
});
export type JudgeDemotedDetail = z.infer<typeof JudgeDemotedDetailSchema>;
