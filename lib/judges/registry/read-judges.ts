import type { Ports } from '../../ports/ports.ts';
import { judgeHeadRecord } from './record-codecs.ts';
import { judgeKeys } from './record-keys.ts';
import { calibrationSummary, latestCalibration } from './calibrations.ts';
import { readHead, readVersions, requireHead, requireVersion, toRef, withEffectiveStatus, type JudgeRefInput } from './judge-store.ts';
import { parseInput } from '../../shared/parse-input.ts';
import { JudgeNotPromotedError } from './registry-errors.ts';
import { ListJudgesQuery, type JudgeDetail, type JudgeHead, type JudgeSummary, type JudgeVersionRecord } from './schemas.ts';

function summaryOf(head: JudgeHead): JudgeSummary {
  const { revision: _, ...summary } = head;
  return summary;
}

/**
 * `GET /v1/judges?limit=&cursor=`: every judge name, by name, with its kind, promoted version and acceptance rule.
 *
 * @example
 * const { items } = await listJudges(ports, {}); // [{ name: 'failure-mode', kind: 'failure-mode', promoted: '3f2a…', … }]
 */
export async function listJudges(ports: Pick<Ports, 'records'>, rawQuery: unknown = {}): Promise<{ items: JudgeSummary[]; cursor?: string }> {
  const q = parseInput(ListJudgesQuery, rawQuery, 'query string');
  const page = await ports.records.query({ index: 'gsi1', partition: judgeKeys.allJudges, limit: q.limit ?? 100, ...(q.cursor ? { cursor: q.cursor } : {}) });
  return { items: page.items.map((i) => summaryOf(judgeHeadRecord.decode(i))), ...(page.cursor ? { cursor: page.cursor } : {}) };
}

/**
 * `GET /v1/judges/{name}`: a judge with every version (oldest first: its definition, identity, status, how it was
 * promoted, demoted or retired), which is promoted, and the latest calibration report of each version.
 *
 * @example
 * const judge = await getJudge(ports, 'scope-judge');
 * judge.promoted; // '3f2a9c0d1e2b'
 * judge.versions.map((v) => [v.version, v.status, v.latestCalibration?.criteria[0]?.kappa.estimate]);
 */
export async function getJudge(ports: Pick<Ports, 'records'>, name: string): Promise<JudgeDetail> {
  const { name: judge } = toRef(name);
  const head = await requireHead(ports.records, judge);
  const versions = await readVersions(ports.records, judge);
  const withCalibration = await Promise.all(
    versions.map(async (v) => {
      const latest = await latestCalibration(ports, { name: v.name, version: v.version });
      return { ...withEffectiveStatus(v, head), ...(latest ? { latestCalibration: calibrationSummary(latest) } : {}) };
    }),
  );
  return { ...summaryOf(head), versions: withCalibration, versionCount: withCalibration.length };
}

/**
 * The judge a name or reference means: `name@version` is that version; a bare name is its promoted version (a
 * `JudgeNotPromotedError`, 404, when none is). What a grader, calibration or the drift watch calls to find the
 * definition to run.
 *
 * @example
 * const judge = await resolveJudge(ports, 'scope-judge'); // the promoted version, with its definition
 * const pinned = await resolveJudge(ports, 'scope-judge@3f2a9c0d1e2b');
 */
export async function resolveJudge(ports: Pick<Ports, 'records'>, nameOrRef: JudgeRefInput): Promise<JudgeVersionRecord> {
  const ref = toRef(nameOrRef);
  if (ref.version !== undefined) {
    const v = await requireVersion(ports.records, { name: ref.name, version: ref.version });
    return withEffectiveStatus(v, await readHead(ports.records, ref.name));
  }
  const head = await requireHead(ports.records, ref.name);
  if (!head.promoted) throw new JudgeNotPromotedError(ref.name);
  const v = await requireVersion(ports.records, { name: ref.name, version: head.promoted });
  return withEffectiveStatus(v, head);
}

