/**
 * A signal's failure-mode label: what the chain (local classifier, judge) or a person said, as it is stored (current
 * label, label history) and returned. The schema is the stored shape; `record-codecs.ts` stores and reads it.
 */
import { z } from 'zod';
import { JudgeRefSchema } from '../judges/judge-identity.ts';
import { SEVERITIES } from './judge-signal.ts';

export const LabelSource = z.enum(['local', 'judge', 'human', 'none']);
export type LabelSource = z.output<typeof LabelSource>;

export const LabelledMode = z.object({
  mode: z.string(),
  probability: z.number().optional(),
  severity: z.enum(SEVERITIES).optional(),
});
export type LabelledMode = z.output<typeof LabelledMode>;

export const ReviewReason = z.enum([
  'local-unsure',
  'judge-low-confidence',
  'judge-malformed',
  'judge-unknown-mode',
  'judge-evidence-not-found',
  'judge-no-answer',
  'judge-error',
]);
export type ReviewReason = z.output<typeof ReviewReason>;

export const ModeLabel = z.object({
  signalKey: z.string(),
  model: z.string(),
  modes: z.array(LabelledMode),
  source: LabelSource,
  /** 0–1: the classifier's calibrated confidence, the judge's own, or 1 for a human. */
  confidence: z.number(),
  taxonomyVersion: z.number(),
  classifierVersion: z.string().optional(),
  judgeModel: z.string().optional(),
  /** The registered judge version that gave (or failed to give) this label (`lib/judges/registry/`). */
  judge: JudgeRefSchema.optional(),
  judgeAttempts: z.number().optional(),
  evidence: z.object({ text: z.string(), source: z.enum(['comment', 'trajectory']) }).optional(),
  /** Why nothing was classified: no text, or text without any known word. */
  unclassifiable: z.enum(['no-text', 'empty', 'no-features', 'non-text']).optional(),
  /** Set while a human should look at it. */
  review: z.object({ reason: ReviewReason, detail: z.string() }).optional(),
  labelledAt: z.string(),
  /** Who labelled it (human labels). */
  labelledBy: z.string().optional(),
  note: z.string().optional(),
});
export type ModeLabel = z.output<typeof ModeLabel>;
