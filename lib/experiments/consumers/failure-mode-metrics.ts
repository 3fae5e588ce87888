/**
 * Failure modes as online metrics: the failure-mode chain publishes `failure-modes.labelled` for every signal it
 * labels (`lib/modes/classify-signal.ts`); a feedback signal with modes becomes one `failure_mode.<mode>` row per mode
 * (value 1; the feedback event's reporter is the unit, with its workspace, model, experiment and arm), archived beside
 * the online metrics, so an analysis counts each mode per thousand exposures per arm with the same SQL as any metric.
 *
 * Idempotent by a derived key: one object per signal (`derived-failure-modes:<signalKey>`), overwritten by a
 * redelivery. Reports are about a model, not a user, so they have no unit and give no rows; a label a person still has
 * to review (`inReview`) is a guess and gives none either.
 *
 * The decisions area wires it: locally on the event log's tail, on AWS behind an EventBridge rule on the type.
 */
import { z } from 'zod';
import { scopePortsToTenant, tenantOf } from '../../auth/tenant-ports.ts';
import { TransientError } from '../../errors.ts';
import { feedbackEventRecord } from '../../feedback/record-codecs.ts';
import { feedbackKeys, utcDay } from '../../feedback/record-keys.ts';
import { FAILURE_MODES_LABELLED } from '../../modes/classify-signal.ts';
import type { Ports } from '../../ports/ports.ts';
import { feedbackMetricRow } from '../archive/archive-rows.ts';
import { writeMetricRows } from '../archive/write-archive-rows.ts';
import { archiveKeys } from '../record-keys.ts';
import { FAILURE_MODE_METRIC_PREFIX, type MetricRow } from '../schemas.ts';

/** The event types this handler reads (the rule's or the log tail's filter). */
export const FAILURE_MODE_METRIC_EVENT_TYPES = [FAILURE_MODES_LABELLED] as const;

/** The part of the event's detail this handler trusts, checked: a mode id must make a metric name. */
const LabelledDetail = z.object({
  signalKey: z.string().min(1),
  kind: z.enum(['feedback', 'report']),
  id: z.string().min(1),
  modes: z.array(z.string().regex(/^[a-z][a-z0-9-]*$/)),
  inReview: z.boolean(),
  labelledAt: z.string(),
  tenant: z.string().optional(),
});

/** An event as the local log tail (`type`) or EventBridge (`detail-type`) hands it over. */
export interface LabelledEvent {
  type?: string;
  'detail-type'?: string;
  detail?: unknown;
}

export interface FailureModeMetricsOutcome {
  /** Signals whose rows were written. */
  signals: number;
  rows: number;
  /** Events of another type, reports, labels in review, labels without modes. */
  skipped: number;
}

/**
 * Writes the `failure_mode.<mode>` rows of each labelled feedback signal the events name. Throws `TransientError`
 * when a named feedback event is not stored (yet): the delivery is retried.
 *
 * @example
 * await handleFailureModeVerdicts(rootPorts, [{ type: 'failure-modes.labelled', detail: { signalKey: 'feedback:e1', kind: 'feedback', id: 'e1', modes: ['scope-calibration'], … } }]);
 * // → raw/metrics/tenant=default/dt=2026-12-04/derived-failure-modes%3Afeedback%3Ae1.jsonl
 */
export async function handleFailureModeVerdicts(rootPorts: Ports, events: ReadonlyArray<LabelledEvent>): Promise<FailureModeMetricsOutcome> {
  const out: FailureModeMetricsOutcome = { signals: 0, rows: 0, skipped: 0 };
  for (const event of events) {
    if ((event['detail-type'] ?? event.type) !== FAILURE_MODES_LABELLED) {
      out.skipped++;
      continue;
    }
    const detail = LabelledDetail.parse(event.detail);
    const modes = [...new Set(detail.modes)];
    if (detail.kind !== 'feedback' || detail.inReview || modes.length === 0) {
      out.skipped++;
      continue;
    }
    // The event names its tenant's signal: read the feedback event through that tenant's view of the records.
    const tenant = tenantOf(detail);
    const ports = scopePortsToTenant(rootPorts, tenant);
    const key = feedbackKeys.event(detail.id);
    const feedback = feedbackEventRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
    if (!feedback) throw new TransientError(`feedback ${detail.id} named by ${FAILURE_MODES_LABELLED} is not stored (yet)`);
    const rows: MetricRow[] = modes.map((mode) =>
      feedbackMetricRow(feedback, { id: `failure_mode:${feedback.eventId}:${mode}`, metric: `${FAILURE_MODE_METRIC_PREFIX}${mode}`, value: 1, receivedAt: detail.labelledAt }),
    );
    await writeMetricRows(rootPorts.blobs, tenant, archiveKeys.derivedMetrics(tenant, utcDay(feedback.occurredAt), `failure-modes:${detail.signalKey}`), rows);
    out.signals++;
    out.rows += rows.length;
  }
  rootPorts.metrics?.count('FailureModeMetricRows', out.rows);
  return out;
}
