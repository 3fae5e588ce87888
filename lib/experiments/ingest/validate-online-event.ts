/**
 * Validates one metric event or exposure: its schema, then `occurredAt` against the server clock (late beyond
 * `occurredAtMaxPastMs` would land in partitions analyses no longer read; ahead beyond `occurredAtMaxFutureMs` is a
 * client clock or a bug). The clock rule runs on the raw input even when the schema failed, so one answer lists every
 * problem of the item.
 */
import type { z } from 'zod';
import { toFieldIssues } from '../../shared/field-issues.ts';
import type { Validated } from '../../shared/ingest-items.ts';
import { EXPERIMENT_LIMITS } from '../schemas.ts';

/**
 * @example
 * const r = validateOnlineEvent(MetricEventInput, body.metrics[3], Date.now(), 'metrics[3]');
 * if (!r.ok) r.issues; // [{ path: 'metrics[3].value', message: 'Invalid input: expected number, received string' }]
 */
export function validateOnlineEvent<S extends z.ZodType>(schema: S, raw: unknown, nowMs: number, prefix = ''): Validated<z.output<S>> {
  const parsed = schema.safeParse(raw);
  const issues = parsed.success ? [] : toFieldIssues(parsed.error.issues, prefix);
  const occurredAt = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as { occurredAt?: unknown }).occurredAt : undefined;
  if (typeof occurredAt === 'string') {
    const t = Date.parse(occurredAt);
    const path = prefix === '' ? 'occurredAt' : `${prefix}.occurredAt`;
    if (t > nowMs + EXPERIMENT_LIMITS.occurredAtMaxFutureMs) {
      issues.push({ path, message: `is more than ${EXPERIMENT_LIMITS.occurredAtMaxFutureMs / 60_000} minutes ahead of the server clock` });
    } else if (t < nowMs - EXPERIMENT_LIMITS.occurredAtMaxPastMs) {
      issues.push({ path, message: `is more than ${EXPERIMENT_LIMITS.occurredAtMaxPastMs / 86_400_000} days in the past` });
    }
  }
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, value: parsed.data };
}
