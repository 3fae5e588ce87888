/**
 * `GET /v1/failure-modes/timeline`: failure modes over time, per checkpoint and per day (or ISO week from Monday):
 * each mode's count and its rate over the classified signals of the bucket (signals the chain or a person labelled,
 * with a mode or none). A vote replaced by a newer one under the same feedbackKey counts once per day, as its
 * newest vote, as the failure-mode counts do.
 *
 * Reads one stored day count per checkpoint and day (`mode-day-rollup.ts`: counted again from the tally rows once it
 * is a minute old for today, ten minutes for the three days before, a day for older ones), so a 30-day timeline reads
 * one query per checkpoint and now and then a day of signals, never the whole store. A week sums its days (a feedbackKey voted on two of them counts in each).
 */
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { forEachLimited } from '../shared/for-each-limited.ts';
import { parseInput } from '../shared/parse-input.ts';
import { readModeDays, type ModeDayCounts } from './mode-day-rollup.ts';
import { modelSeenRecord } from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';
import { FailureModeTimelineQuery, MAX_TIMELINE_CHECKPOINTS, MAX_TIMELINE_DAYS, type FailureModeTimeline, type TimelinePoint } from './timeline-schemas.ts';

const DAY_MS = 86_400_000;
/** Default range: this many days up to `to`. */
const DEFAULT_DAYS = 30;

/**
 * @example
 * const timeline = await getFailureModeTimeline(ports, { checkpoint: 'coder-7b:step-100', from: '2026-11-01', bucket: 'week' });
 */
export async function getFailureModeTimeline(ports: Pick<Ports, 'records'>, rawQuery: unknown, now: Date = new Date()): Promise<FailureModeTimeline> {
  const q = parseInput(FailureModeTimelineQuery, rawQuery, 'query');
  const to = q.to ?? now.toISOString().slice(0, 10);
  const toMs = Date.parse(`${to}T00:00:00Z`);
  const fromMs = q.from !== undefined ? Date.parse(`${q.from}T00:00:00Z`) : toMs - (DEFAULT_DAYS - 1) * DAY_MS;
  if (Number.isNaN(toMs)) throw invalid('to', 'not a calendar day');
  if (Number.isNaN(fromMs)) throw invalid('from', 'not a calendar day');
  if (fromMs > toMs) throw invalid('from', 'after `to`');
  if ((toMs - fromMs) / DAY_MS + 1 > MAX_TIMELINE_DAYS) throw invalid('from', `the range is over ${MAX_TIMELINE_DAYS} days`);
  const days: string[] = [];
  for (let d = fromMs; d <= toMs; d += DAY_MS) days.push(new Date(d).toISOString().slice(0, 10));

  const checkpoints = q.checkpoint !== undefined ? [...new Set(q.checkpoint.split(','))] : await modelsSeen(ports);
  if (checkpoints.length > MAX_TIMELINE_CHECKPOINTS) throw invalid('checkpoint', `at most ${MAX_TIMELINE_CHECKPOINTS} checkpoints`);

  const totals = new Map<string, number>();
  const series: FailureModeTimeline['checkpoints'] = [];
  await forEachLimited(checkpoints, 4, async (checkpoint) => {
    const counts = await readModeDays(ports.records, checkpoint, days, now);
    const buckets = new Map<string, ModeDayCounts[]>();
    for (const day of days) {
      const start = q.bucket === 'week' ? weekStart(day) : day;
      const c = counts.get(day);
      buckets.set(start, [...(buckets.get(start) ?? []), ...(c ? [c] : [])]);
    }
    series.push({ checkpoint, points: [...buckets].map(([start, list]) => point(start, list, totals)) });
  });
  series.sort((a, b) => checkpoints.indexOf(a.checkpoint) - checkpoints.indexOf(b.checkpoint));
  const modes = [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([m]) => m);
  return { from: days[0]!, to: days[days.length - 1]!, bucket: q.bucket, modes, checkpoints: series };
}

/** A bucket's point: its days summed (a week counts a feedbackKey voted on two of its days in each). */
function point(start: string, days: ModeDayCounts[], totals: Map<string, number>): TimelinePoint {
  let signals = 0;
  let classified = 0;
  const counts = new Map<string, number>();
  for (const d of days) {
    signals += d.signals;
    classified += d.classified;
    for (const [m, n] of Object.entries(d.modes)) counts.set(m, (counts.get(m) ?? 0) + n);
  }
  const modes: TimelinePoint['modes'] = {};
  for (const [m, count] of counts) {
    modes[m] = { count, rate: classified > 0 ? count / classified : null };
    totals.set(m, (totals.get(m) ?? 0) + count);
  }
  return { start, signals, classified, modes };
}

/** The Monday of a day's ISO week. */
function weekStart(day: string): string {
  const ms = Date.parse(`${day}T00:00:00Z`);
  const dow = (new Date(ms).getUTCDay() + 6) % 7; // Monday 0
  return new Date(ms - dow * DAY_MS).toISOString().slice(0, 10);
}

/** Checkpoints with signals, first `MAX_TIMELINE_CHECKPOINTS` by id. */
async function modelsSeen(ports: Pick<Ports, 'records'>): Promise<string[]> {
  const page = await ports.records.query({ partition: modeKeys.models, limit: MAX_TIMELINE_CHECKPOINTS });
  return page.items.map((i) => modelSeenRecord.decode(i).model);
}

function invalid(field: string, message: string): ValidationError {
  return new ValidationError(`Invalid query: ${field}: ${message}`, [{ path: field, message }]);
}
