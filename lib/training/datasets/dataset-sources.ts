/**
 * What a dataset selection names, listed: the attempt records of the selected eval runs and of every run of the
 * selected sweeps' shards (`EVAL#<shardRunId>.shard-<i>`, as `aggregate-shard` reads them), and the stored feedback
 * events of the selected window (by day, oldest first). Nothing is read here but records and the sweep's plan: a
 * trajectory is read by the builder, and a feedback trajectory only through `readTrajectoryForTraining`.
 *
 * @example
 * const { attempts, feedback } = await listDatasetSources(ports, selection);
 */
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { FieldIssue } from '../../shared/field-issues.ts';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import { listAttemptRecords } from '../../harness/attempt/read-attempt-records.ts';
import { feedbackEventRecord, type StoredFeedbackEvent } from '../../feedback/record-codecs.ts';
import { feedbackKeys, utcDay } from '../../feedback/record-keys.ts';
import type { Ports } from '../../ports/ports.ts';
import { readPlan } from '../../sweeps/plan-shards.ts';
import { shardIndexOf, sweepKeys } from '../../sweeps/record-keys.ts';
import { shardAttemptRunIds } from '../../sweeps/shard-spec.ts';
import { getSweep } from '../../sweeps/sweep-record.ts';
import type { DatasetSelection } from '../schemas.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Feedback window without `since`: the 30 days before `until`. */
const DEFAULT_FEEDBACK_DAYS = 30;
/** Longest feedback window one dataset may walk (one query per day). */
const MAX_FEEDBACK_DAYS = 400;

export interface DatasetSources {
  /** Attempt records with the run they were listed under, in selection order. */
  attempts: Array<{ runId: string; attempt: AttemptRecord }>;
  feedback: StoredFeedbackEvent[];
}

/** The run ids a sweep's attempts are under: every array child of every planned shard. */
export async function sweepRunIds(ports: Pick<Ports, 'records' | 'blobs'>, sweepId: string, field: string): Promise<string[]> {
  try {
    await getSweep(ports.records, sweepId);
  } catch (error) {
    if (error instanceof NotFoundError) throw new ValidationError(`No sweep ${sweepId}`, [{ path: field, message: `no sweep ${sweepId}` }]);
    throw error;
  }
  const shards = await readPlan(ports, sweepId);
  if (shards.length === 0) throw new ValidationError(`Sweep ${sweepId} has no plan yet`, [{ path: field, message: `sweep ${sweepId} has not planned its shards` }]);
  return shards.flatMap((s) => shardAttemptRunIds({ runId: sweepKeys.shardRunId(sweepId, s.checkpoint, s.suite, s.mode, shardIndexOf(s)), arraySize: s.arraySize }));
}

/**
 * Lists the selection's attempts and feedback events; throws `Flywheel.ValidationError` naming the field of an unknown
 * run (no attempt records), an unknown sweep, or a bad feedback window.
 *
 * @example
 * const sources = await listDatasetSources(ports, DatasetSelectionSchema.parse({ runs: ['nightly-1'] }));
 */
export async function listDatasetSources(ports: Pick<Ports, 'records' | 'blobs' | 'now'>, selection: DatasetSelection): Promise<DatasetSources> {
  const issues: FieldIssue[] = [];
  const attempts: DatasetSources['attempts'] = [];
  const seen = new Set<string>();
  const add = (runId: string, list: AttemptRecord[]) => {
    for (const attempt of list) {
      // One attempt once, whether named by its run and by its sweep.
      const key = `${attempt.pk}|${attempt.sk}`;
      if (seen.has(key)) continue;
      seen.add(key);
      attempts.push({ runId, attempt });
    }
  };
  for (const [i, runId] of selection.runs.entries()) {
    const list = await listAttemptRecords(ports.records, runId);
    if (list.length === 0) issues.push({ path: `selection.runs[${i}]`, message: `no attempts recorded for run ${runId} (unknown run?)` });
    add(runId, list);
  }
  for (const [i, sweepId] of selection.sweeps.entries()) {
    let runIds: string[];
    try {
      runIds = await sweepRunIds(ports, sweepId, `selection.sweeps[${i}]`);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      issues.push(...error.issues);
      continue;
    }
    for (const runId of runIds) add(runId, await listAttemptRecords(ports.records, runId));
  }
  const feedback = selection.feedback ? await listFeedbackEvents(ports, selection.feedback, issues) : [];
  if (issues.length > 0) throw new ValidationError(`Invalid dataset selection: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  return { attempts, feedback };
}

async function listFeedbackEvents(
  ports: Pick<Ports, 'records' | 'now'>,
  window: NonNullable<DatasetSelection['feedback']>,
  issues: FieldIssue[],
): Promise<StoredFeedbackEvent[]> {
  const until = window.until ? new Date(window.until) : ports.now();
  const since = window.since ? new Date(window.since) : new Date(until.getTime() - DEFAULT_FEEDBACK_DAYS * DAY_MS);
  if (since.getTime() > until.getTime()) {
    issues.push({ path: 'selection.feedback.since', message: 'must not be after until' });
    return [];
  }
  if (until.getTime() - since.getTime() > MAX_FEEDBACK_DAYS * DAY_MS) {
    issues.push({ path: 'selection.feedback.since', message: `since and until may be at most ${MAX_FEEDBACK_DAYS} days apart` });
    return [];
  }
  const lower = since.toISOString();
  const upper = `${until.toISOString()}~`; // '~' sorts after '#' and every id character: includes all of `until`
  const out: StoredFeedbackEvent[] = [];
  for (let t = Date.parse(`${utcDay(lower)}T00:00:00Z`); t <= until.getTime(); t += DAY_MS) {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({
        index: 'gsi2',
        partition: feedbackKeys.byDay(new Date(t).toISOString().slice(0, 10)),
        sort: { between: [lower, upper] },
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      for (const item of page.items) {
        out.push(feedbackEventRecord.decode(item));
        if (out.length >= window.limit) return out;
      }
      cursor = page.cursor;
    } while (cursor);
  }
  return out;
}
