/**
 * `forge report`: what a forge run made, read back from its candidate records: how many were tried and certified,
 * why the others were not, certified tasks per hour, and the spread (per file, directory and strategy, public vs
 * private, and the histogram of the share of the suite a deletion failed).
 */
import type { RecordsPort } from '../../ports/records.ts';
import { listCandidateRecords } from '../forge-records.ts';
import { directoryOf, primaryFile } from '../rank/candidate-features.ts';
import { RANKING_REFUSALS } from '../rank/static-refusals.ts';
import type { CandidateRecordBody } from '../schemas.ts';

/** Failing-share buckets: upper bounds (exclusive) and labels; the last is open. */
export const FAILING_SHARE_BUCKETS: ReadonlyArray<{ below: number; label: string }> = [
  { below: 0.05, label: '0-5%' },
  { below: 0.1, label: '5-10%' },
  { below: 0.2, label: '10-20%' },
  { below: 0.35, label: '20-35%' },
  { below: Number.POSITIVE_INFINITY, label: '>35%' },
];

export interface SpreadRow {
  key: string;
  tried: number;
  certified: number;
}

export interface ForgeReport {
  runId: string;
  /** Every candidate with a record: refused before a run, or tried. */
  candidates: number;
  /** Refused by the ranking without a run (one-liners, near duplicates). */
  refused: number;
  tried: number;
  certified: number;
  /** Certified of tried (0 when none was tried). */
  certifiedShare: number;
  /** Candidates by verdict (`certified`, `rejected:<code>`, `skipped:<code>`, `duplicate`), most first. */
  reasons: Array<{ verdict: string; count: number }>;
  /** Hours of the candidates' certification (their durations summed). */
  hours: number;
  /** Certified per hour of `hours`; null when nothing ran. */
  tasksPerHour: number | null;
  spread: {
    byFile: SpreadRow[];
    byDirectory: SpreadRow[];
    byStrategy: SpreadRow[];
    /** `public`, `private`, or `unranked` (records without a rank). */
    byVisibility: SpreadRow[];
    /** Tried candidates by the share of the stable tests the broken tree failed, in bucket order. */
    failingShare: SpreadRow[];
    /** Tried candidates whose failing share was not measured (stopped before the full run). */
    failingShareUnmeasured: number;
  };
}

/** A record of a candidate the ranking refused (no run, no rank). */
export function refusedBeforeRun(r: CandidateRecordBody): boolean {
  return r.rank === undefined && r.status === 'rejected' && (RANKING_REFUSALS as readonly string[]).includes(r.reason ?? '');
}

function verdictKey(r: CandidateRecordBody): string {
  return r.status === 'duplicate' ? 'duplicate' : r.verdict;
}

function fileOf(r: CandidateRecordBody): string {
  return primaryFile(r.entryPoint, r.files);
}

function spread(records: readonly CandidateRecordBody[], keyOf: (r: CandidateRecordBody) => string): SpreadRow[] {
  const rows = new Map<string, SpreadRow>();
  for (const r of records) {
    const key = keyOf(r);
    const row = rows.get(key) ?? { key, tried: 0, certified: 0 };
    row.tried++;
    if (r.status === 'certified') row.certified++;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.certified - a.certified || b.tried - a.tried || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** The bucket label of a failing share. */
export function failingShareBucket(share: number): string {
  return FAILING_SHARE_BUCKETS.find((b) => share < b.below)!.label;
}

/**
 * The report of one forge run, from its candidate records alone.
 *
 * @example
 * const report = await forgeReport(ports.records, 'forge-2026-12-04T16-00-00-000Z-1a2b3c');
 * console.log(`${report.certified}/${report.tried} certified, ${report.tasksPerHour?.toFixed(0)} tasks/h`);
 */
export async function forgeReport(records: RecordsPort, runId: string): Promise<ForgeReport> {
  const all = await listCandidateRecords(records, runId);
  const tried = all.filter((r) => !refusedBeforeRun(r));
  const certified = tried.filter((r) => r.status === 'certified').length;
  const counts = new Map<string, number>();
  for (const r of all) counts.set(verdictKey(r), (counts.get(verdictKey(r)) ?? 0) + 1);
  const hours = tried.reduce((sum, r) => sum + r.durationMs, 0) / 3_600_000;
  const measured = tried.filter((r) => r.failingShare !== undefined);
  const histogram = spread(measured, (r) => failingShareBucket(r.failingShare!));
  return {
    runId,
    candidates: all.length,
    refused: all.length - tried.length,
    tried: tried.length,
    certified,
    certifiedShare: tried.length > 0 ? certified / tried.length : 0,
    reasons: [...counts].map(([verdict, count]) => ({ verdict, count })).sort((a, b) => b.count - a.count || (a.verdict < b.verdict ? -1 : 1)),
    hours,
    tasksPerHour: hours > 0 ? certified / hours : null,
    spread: {
      byFile: spread(tried, fileOf),
      byDirectory: spread(tried, (r) => directoryOf(fileOf(r))),
      byStrategy: spread(tried, (r) => r.strategy),
      byVisibility: spread(tried, (r) => (r.rank ? (r.rank.isPublic ? 'public' : 'private') : 'unranked')),
      failingShare: FAILING_SHARE_BUCKETS.map((b) => histogram.find((row) => row.key === b.label) ?? { key: b.label, tried: 0, certified: 0 }),
      failingShareUnmeasured: tried.length - measured.length,
    },
  };
}
