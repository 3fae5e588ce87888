/**
 * What an accepted item becomes in the raw archive: the snake_case row of the Glue table (`MetricRow`,
 * `ExposureRow`), absent optional fields as null, so every row of a table has every column.
 */
import type { IngestedExposure, IngestedMetricEvent } from '../../feedback/ingest-envelope.ts';
import { FEEDBACK_THUMB_METRIC, type ExposureRow, type MetricRow } from '../schemas.ts';

/**
 * @example
 * metricRowOf({ metricEventId: 'm1', metric: 'latency_ms', value: 840, … }); // { id: 'm1', metric: 'latency_ms', value: 840, user_id: …, … }
 */
export function metricRowOf(e: IngestedMetricEvent): MetricRow {
  return {
    id: e.metricEventId,
    metric: e.metric,
    value: e.value,
    scope: e.scope,
    user_id: e.userId,
    workspace_id: e.workspaceId ?? null,
    model: e.model,
    experiment: e.experiment ?? null,
    arm: e.arm ?? null,
    session_id: e.sessionId ?? null,
    turn_id: e.turnId ?? null,
    occurred_at: e.occurredAt,
    received_at: e.receivedAt,
  };
}

/**
 * @example
 * exposureRowOf({ exposureId: 'x1', experiment: 'exp-1', arm: 'b', unitType: 'user', unitId: 'u1', … }); // { id: 'x1', unit_type: 'user', … }
 */
export function exposureRowOf(e: IngestedExposure): ExposureRow {
  return {
    id: e.exposureId,
    experiment: e.experiment,
    arm: e.arm,
    checkpoint: e.checkpoint,
    unit_type: e.unitType,
    unit_id: e.unitId,
    session_id: e.sessionId ?? null,
    turn_id: e.turnId ?? null,
    occurred_at: e.occurredAt,
    received_at: e.receivedAt,
  };
}

/** The feedback fields a derived row reads: who, where, which model and arm, when. */
export interface FeedbackRowSource {
  eventId: string;
  reporter: string;
  workspaceId?: string | undefined;
  model: string;
  experiment?: string | undefined;
  arm?: string | undefined;
  sessionId: string;
  turnId: string;
  occurredAt: string;
  receivedAt: string;
}

/**
 * A derived row about one stored feedback event: the reporter is the unit (`user_id`), the event's workspace,
 * model, experiment and arm as given.
 *
 * @example
 * feedbackMetricRow(event, { id: 'thumb:e1', metric: 'feedback.thumb', value: 1 });
 */
export function feedbackMetricRow(e: FeedbackRowSource, row: { id: string; metric: string; value: number; receivedAt?: string }): MetricRow {
  return {
    id: row.id,
    metric: row.metric,
    value: row.value,
    scope: 'turn',
    user_id: e.reporter,
    workspace_id: e.workspaceId ?? null,
    model: e.model,
    experiment: e.experiment ?? null,
    arm: e.arm ?? null,
    session_id: e.sessionId,
    turn_id: e.turnId,
    occurred_at: e.occurredAt,
    received_at: row.receivedAt ?? e.receivedAt,
  };
}

/**
 * The `feedback.thumb` row of a rated feedback event (1 up, 0 down); undefined for one without a rating.
 *
 * @example
 * thumbRowOf({ ...event, rating: 'down' })?.value; // 0
 */
export function thumbRowOf(e: FeedbackRowSource & { rating: 'up' | 'down' | 'none' }): MetricRow | undefined {
  if (e.rating === 'none') return undefined;
  return feedbackMetricRow(e, { id: `thumb:${e.eventId}`, metric: FEEDBACK_THUMB_METRIC, value: e.rating === 'up' ? 1 : 0 });
}
