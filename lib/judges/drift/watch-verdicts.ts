/**
 * The drift watch's intake: every `judge.verdict` (a production verdict of a judge) is looked at once. A
 * deterministic share of ALL verdicts is queued as `production-sample` (by hash of judge and subject, default 5%,
 * disagreements included): an unbiased sample, the only pairs the rolling kappa is computed on. A verdict the user
 * disagreed with (the judge found nothing wrong, the user gave a thumbs-down) outside the sample is still ALWAYS queued
 * (`disagreement`), for people to look at and for the drift check to report apart — never in the kappa, as they would
 * drag a sound judge's kappa far below its calibration. The judge's labels are stored with the item, so a person's
 * labels can be set beside them.
 */
import { ValidationError } from '../../errors.ts';
import type { Ports } from '../../ports/ports.ts';
import { toFieldIssues } from '../../shared/field-issues.ts';
import { inFraction, subjectKey, type AnnotationItem } from '../annotation/annotation-item.ts';
import { enqueueAnnotation } from '../annotation/annotation-queue.ts';
import { JudgeVerdictDetailSchema, type JudgeVerdictDetail } from '../events.ts';
import { judgeRefString } from '../judge-identity.ts';
import { driftQueue } from './record-keys.ts';

/** The share of production verdicts sampled for people, by default. */
export const DEFAULT_SAMPLE_FRACTION = 0.05;

export interface WatchOptions {
  /** Share of all verdicts queued as the unbiased sample (0–1). Default 0.05. */
  sampleFraction?: number;
}

export type WatchOutcome = 'disagreement' | 'production-sample' | 'skipped';

/** A judge–user disagreement: the judge found nothing wrong and the user gave a thumbs-down. */
export function isDisagreement(detail: Pick<JudgeVerdictDetail, 'fine' | 'userRating'>): boolean {
  return detail.fine && detail.userRating === 'down';
}

/**
 * Queues a production verdict for people when it falls in the sample or is a disagreement.
 *
 * @example
 * await watchVerdict(ports, detail); // { outcome: 'disagreement', item }
 * @throws ValidationError naming the field of a detail that is not a verdict.
 */
export async function watchVerdict(
  ports: Pick<Ports, 'records' | 'blobs' | 'now'>,
  rawDetail: unknown,
  options: WatchOptions = {},
): Promise<{ outcome: WatchOutcome; item?: AnnotationItem }> {
  // The tenant's events port adds `tenant` to every detail; the consumer has scoped its ports to it already.
  const { tenant: _tenant, ...fields } = (rawDetail ?? {}) as Record<string, unknown>;
  const parsed = JudgeVerdictDetailSchema.safeParse(fields);
  if (!parsed.success) throw new ValidationError('Invalid judge.verdict detail', toFieldIssues(parsed.error.issues, 'detail'));
  const detail = parsed.data;
  const fraction = options.sampleFraction ?? DEFAULT_SAMPLE_FRACTION;
  // The sample is drawn first, over every verdict: a disagreement in the sample is a sample item (so the sample stays
  // unbiased); one outside it is queued as a disagreement.
  const outcome: WatchOutcome = inFraction(`${judgeRefString(detail.judge)}\n${subjectKey(detail.subject)}`, fraction)
    ? 'production-sample'
    : isDisagreement(detail)
      ? 'disagreement'
      : 'skipped';
  if (outcome === 'skipped') return { outcome };
  const labels = Object.keys(detail.labels);
  const { item } = await enqueueAnnotation(
    ports,
    { subject: detail.subject, reason: outcome, queue: driftQueue(detail.judge.name), ...(labels.length > 0 ? { labels } : {}) },
    {
      judge: {
        ref: detail.judge,
        labels: detail.labels,
        fine: detail.fine,
        ...(detail.userRating !== undefined ? { userRating: detail.userRating } : {}),
        at: detail.at,
      },
    },
  );
  return { outcome, item };
}

/** The detail of an EventBridge-shaped `judge.verdict` event (as SQS or the local tail delivers it), or undefined. */
export function verdictDetailOf(body: string): Record<string, unknown> | undefined {
  const event = JSON.parse(body) as { 'detail-type'?: string; type?: string; detail?: unknown };
  const type = event['detail-type'] ?? event.type;
  if (type !== 'judge.verdict' || typeof event.detail !== 'object' || event.detail === null) return undefined;
  return event.detail as Record<string, unknown>;
}

