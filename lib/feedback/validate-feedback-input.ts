import { type FieldIssue, toFieldIssues } from '../shared/field-issues.ts';
import { FEEDBACK_LIMITS, FeedbackEventInput, type ParsedFeedbackEvent } from './schemas.ts';

export type Validated<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/**
 * Validates one feedback event: the schema, then the rules that span fields or need the clock. The cross-field
 * rules run on the raw input even when the schema failed, so one answer lists every problem of the item.
 *
 * @example
 * const r = validateFeedbackEvent(body.events[3], Date.now(), 'events[3]');
 * if (!r.ok) console.log(r.issues); // [{ path: 'events[3].outcome', message: 'is required when kind is outcome' }]
 */
export function validateFeedbackEvent(raw: unknown, nowMs: number, prefix = ''): Validated<ParsedFeedbackEvent> {
  const parsed = FeedbackEventInput.safeParse(raw);
  const issues = parsed.success ? [] : toFieldIssues(parsed.error.issues, prefix);
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw)) {
    const r = raw as Record<string, unknown>;
    const at = (field: string) => (prefix === '' ? field : `${prefix}.${field}`);
    if (r.kind === 'outcome' && r.outcome === undefined) {
      issues.push({ path: at('outcome'), message: 'is required when kind is outcome' });
    } else if (r.kind !== 'outcome' && r.outcome !== undefined && typeof r.kind === 'string') {
      issues.push({ path: at('outcome'), message: 'is allowed only when kind is outcome' });
    }
    if (r.kind === 'rating' && r.rating !== 'up' && r.rating !== 'down' && (r.rating === undefined || r.rating === 'none')) {
      issues.push({ path: at('rating'), message: 'must be up or down when kind is rating' });
    }
    if (r.kind === 'comment' && (r.comment === undefined || r.comment === '')) {
      issues.push({ path: at('comment'), message: 'is required when kind is comment' });
    }
    if (typeof r.occurredAt === 'string') {
      const t = Date.parse(r.occurredAt);
      if (t > nowMs + FEEDBACK_LIMITS.occurredAtMaxFutureMs) {
        issues.push({
          path: at('occurredAt'),
          message: `is more than ${FEEDBACK_LIMITS.occurredAtMaxFutureMs / 60000} minutes ahead of the server clock`,
        });
      }
    }
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, value: parsed.data };
}
