import type { Ports } from '../ports/ports.ts';
import { getSuite } from './get-suite.ts';
import { parseInput } from '../shared/parse-input.ts';
import { suiteBestPointRecord, type SuiteBestPointRecord } from './record-codecs.ts';
import { suiteView } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import { GetSuiteQuery, type Suite, type SuiteBestPoint, type SuiteDetail } from './schemas.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Records a page of the best-score series may hold (the records port caps a page at 1000). */
const PAGE = 1000;

/**
 * The best-score series of a suite: per sweep, its best strict score (`SUITE#<id>` / `BEST#<at>#<sweepId>`, written
 * by the sweeps' check-saturation step), the newest `limit` points, oldest first. Points of earlier versions are
 * kept (each names its `suiteVersion`).
 *
 * @example
 * const points = await listSuiteBestScores(ports.records, 'forge-py', 100);
 */
export async function listSuiteBestScores(records: Ports['records'], id: string, limit: number): Promise<SuiteBestPoint[]> {
  const items: SuiteBestPointRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({
      partition: registryKeys.suite(id).pk,
      sort: { beginsWith: registryKeys.suiteBestPrefix },
      descending: true,
      limit: Math.min(PAGE, limit - items.length),
      ...(cursor ? { cursor } : {}),
    });
    items.push(...page.items.map(suiteBestPointRecord.decode));
    cursor = page.cursor;
  } while (cursor && items.length < limit);
  return items.reverse().map((p) => ({ at: p.at, sweepId: p.sweepId, checkpoint: p.checkpoint, score: p.score, suiteVersion: p.suiteVersion }));
}

/**
 * How long the suite (this version) was useful: creation → saturation (`usefulLifeDays`, recorded by check-saturation),
 * else creation → retirement for a suite retired before it saturated, else creation → now.
 */
export function usefulLife(suite: Suite, now: Date): SuiteDetail['usefulLife'] {
  const end =
    suite.saturatedAt ? { endedAt: suite.saturatedAt, endedBy: 'saturation' as const }
    : suite.retiredAt ? { endedAt: suite.retiredAt, endedBy: 'retirement' as const }
    : undefined;
  const days = suite.saturatedAt && suite.usefulLifeDays !== undefined ? suite.usefulLifeDays : Math.round(((Date.parse(end?.endedAt ?? now.toISOString()) - Date.parse(suite.createdAt)) / DAY_MS) * 100) / 100;
  return { startedAt: suite.createdAt, ...(end ?? {}), days };
}

/**
 * `GET /v1/suites/{id}?points=`: the suite (without its task ids), its useful life, and its best strict score over
 * time; throws `Flywheel.NotFoundError` (404) for an unknown id.
 *
 * @example
 * const { status, usefulLife, bestScores } = await getSuiteDetail(ports, 'forge-py', {});
 */
export async function getSuiteDetail(ports: Pick<Ports, 'records' | 'now'>, id: string, rawQuery: unknown): Promise<SuiteDetail> {
  const q = parseInput(GetSuiteQuery, rawQuery, 'query string');
  const suite = await getSuite(ports.records, id);
  const bestScores = await listSuiteBestScores(ports.records, id, q.points);
  return { ...suiteView(suite), usefulLife: usefulLife(suite, ports.now()), bestScores };
}
