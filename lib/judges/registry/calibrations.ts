import type { Ports } from '../../ports/ports.ts';
import type { JudgeRef } from '../judge-identity.ts';
import { CalibrationReportSchema, type CalibrationReport } from '../schemas.ts';
import { calibrationReportRecord } from './record-codecs.ts';
import { judgeKeys } from './record-keys.ts';
import { requireVersion, toRef, type JudgeRefInput } from './judge-store.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { ListCalibrationsQuery, type CalibrationSummary } from './schemas.ts';

/**
 * Stores a calibration report of a registered judge version (a `JudgeNotFoundError` for an unregistered one). Reports
 * are immutable and keyed by version, time and id: saving the same report again changes nothing (`created: false`).
 *
 * @example
 * await saveCalibrationReport(ports, report); // report.judge = { name: 'scope-judge', version: '3f2a9c0d1e2b' }
 * const latest = await latestCalibration(ports, report.judge); // the newest report of that version
 */
export async function saveCalibrationReport(ports: Pick<Ports, 'records'>, report: CalibrationReport): Promise<{ report: CalibrationReport; created: boolean }> {
  const r = parseInput(CalibrationReportSchema, report, 'calibration report');
  await requireVersion(ports.records, toRef(r.judge, true));
  const { written } = await ports.records.put(calibrationReportRecord.encode(r), { condition: { kind: 'absent' } });
  return { report: r, created: written };
}

/**
 * The newest calibration report of one judge version, or undefined when it has none.
 *
 * @example
 * const report = await latestCalibration(ports, 'scope-judge@3f2a9c0d1e2b');
 */
export async function latestCalibration(ports: Pick<Ports, 'records'>, ref: JudgeRefInput): Promise<CalibrationReport | undefined> {
  const r: JudgeRef = toRef(ref, true);
  const page = await ports.records.query({ partition: judgeKeys.partition(r.name), sort: { beginsWith: judgeKeys.calibrationPrefix(r.version) }, descending: true, limit: 1 });
  const item = page.items[0];
  return item ? calibrationReportRecord.decode(item) : undefined;
}

/**
 * `GET /v1/judges/{name}/calibrations?version=&limit=&cursor=`: a judge's calibration reports (of one version with
 * `version`), newest first within each version.
 *
 * @example
 * const { items } = await listCalibrations(ports, 'scope-judge', { version: '3f2a9c0d1e2b' });
 */
export async function listCalibrations(ports: Pick<Ports, 'records'>, name: string, rawQuery: unknown): Promise<{ items: CalibrationReport[]; cursor?: string }> {
  const q = parseInput(ListCalibrationsQuery, rawQuery, 'query string');
  const { name: judge } = toRef(name);
  const page = await ports.records.query({
    partition: judgeKeys.partition(judge),
    sort: { beginsWith: judgeKeys.calibrationPrefix(q.version) },
    descending: true,
    limit: q.limit ?? 50,
    ...(q.cursor ? { cursor: q.cursor } : {}),
  });
  return { items: page.items.map((i) => calibrationReportRecord.decode(i)), ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/** The figures of a report a judge's page shows beside its version. */
export function calibrationSummary(r: CalibrationReport): CalibrationSummary {
  return {
    id: r.id,
    goldSet: r.goldSet,
    createdAt: r.createdAt,
    criteria: r.criteria.map((c) => ({ id: c.id, n: c.n, kappa: c.kappa })),
    ...(r.costPerVerdictUsd !== undefined ? { costPerVerdictUsd: r.costPerVerdictUsd } : {}),
  };
}

