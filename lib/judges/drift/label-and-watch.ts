/**
 * Labelling through the drift watch: a person's labels go to the item (`labelAnnotation`); when the item is a drift
 * item (a production verdict queued by the watch) and is now done, its (judge, person) pair joins the judge version's
 * rolling window and the judge's drift is checked at once (cheap: one query of the window, one report read). That is
 * the drift watch's schedule: every label of a drift item, plus `POST /v1/judges/{name}/drift-check` on demand.
 */
import { NotFoundError } from '../../errors.ts';
import type { NoticeDeliveryOptions } from '../../people/notices/deliver-notice.ts';
import type { Ports } from '../../ports/ports.ts';
import type { AnnotationItem } from '../annotation/annotation-item.ts';
import { labelAnnotation } from '../annotation/annotation-queue.ts';
import { checkDrift, recordDriftPair, type DriftCheck, type DriftCheckOptions } from './check-drift.ts';

/**
 * @example
 * const { item, drift } = await labelAnnotationAndWatch(ports, id, { annotator: 'ana', labels: { 'mode:scope-calibration': 'yes' } });
 * drift?.status; // 'ok' | 'dropped' | …
 * @throws what `labelAnnotation` throws (ValidationError naming `labels.<id>`, ConflictError, NotFoundError).
 */
export async function labelAnnotationAndWatch(
  ports: Pick<Ports, 'records' | 'events' | 'now'>,
  id: string,
  request: unknown,
  options: { drift?: DriftCheckOptions; notify?: NoticeDeliveryOptions } = {},
): Promise<{ item: AnnotationItem; drift?: DriftCheck }> {
  const item = await labelAnnotation(ports, id, request);
  if (item.status !== 'done' || !item.judge || !item.labels || !item.annotator || !item.labelledAt) return { item };
  await recordDriftPair(ports, {
    judge: item.judge.ref,
    itemId: item.id,
    reason: item.reason,
    judgeLabels: item.judge.labels,
    personLabels: item.labels,
    annotator: item.annotator,
    labelledAt: item.labelledAt,
    userDisagreed: item.judge.fine && item.judge.userRating === 'down',
  });
  try {
    return { item, drift: await checkDrift(ports, item.judge.ref.name, options.drift ?? {}, options.notify ?? {}) };
  } catch (error) {
    // The label is stored: a judge that is not (or no longer) in the registry has no drift to check.
    if (error instanceof NotFoundError) return { item };
    throw error;
  }
}
