/**
 * Domain events of the judges capability. `judge.verdict` is published for each verdict a judge gives on production
 * data (a failure-mode label of a signal): the drift watch samples them and queues every judge–user disagreement.
 */
import { z } from 'zod';
import { JudgeRefSchema } from './judge-identity.ts';
import { SubjectSchema } from './schemas.ts';

export const JUDGE_VERDICT = 'judge.verdict';
export const JUDGE_PROMOTED = 'judge.promoted';
export const JUDGE_DEMOTED = 'judge.demoted';

export const JudgeVerdictDetailSchema = z.strictObject({
  judge: JudgeRefSchema,
  subject: SubjectSchema,
  /** The judge's labels in the gold-item vocabulary (`mode:<id>` → `yes`/`no`, criterion id → `pass`/`fail`). */
  labels: z.record(z.string(), z.string()),
  /** True when the judge found nothing wrong (no mode, every criterion passed). */
  fine: z.boolean(),
  /** The user's own rating of the subject, when there is one (`up`/`down`). */
  userRating: z.string().optional(),
  at: z.string(),
});
export type JudgeVerdictDetail = z.infer<typeof JudgeVerdictDetailSchema>;
