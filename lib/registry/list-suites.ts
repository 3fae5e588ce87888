import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { suiteView, toSuite } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import { ListSuitesQuery, type Suite } from './schemas.ts';

/** Every registered suite (index gsi1 `SUITES`, by id), with their task ids. */
export async function listAllSuites(ports: Pick<Ports, 'records'>): Promise<Suite[]> {
  const out: Suite[] = [];
  let cursor: string | undefined;
  do {
    const page = await ports.records.query({ index: 'gsi1', partition: registryKeys.allSuites, limit: 1000, ...(cursor ? { cursor } : {}) });
    out.push(...page.items.map(toSuite));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * `GET /v1/suites?status=`: suites by id, without their task id lists.
 *
 * @example
 * const { items } = await listSuites(ports, { status: 'saturated' });
 */
export async function listSuites(ports: Pick<Ports, 'records'>, rawQuery: unknown): Promise<{ items: Array<Omit<Suite, 'taskIds'>> }> {
  const q = parseInput(ListSuitesQuery, rawQuery, 'query string');
  const all = await listAllSuites(ports);
  return { items: all.filter((s) => !q.status || s.status === q.status).map(suiteView) };
}
