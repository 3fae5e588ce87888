/**
 * Taxonomy versions in the records port: one immutable item per version, all in one partition so the newest is a
 * single descending query.
 *
 * Keys: pk `TAXONOMY`, sk `VERSION#<version, 10 digits>` (zero-padded so string order is numeric order).
 * Writes are conditional (`absent`), so two concurrent revisions of the same parent cannot both become version n+1:
 * the loser gets a `Flywheel.ConflictError` and can reload and retry.
 */
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { defaultTaxonomy, parseTaxonomy, reviseTaxonomy, type Taxonomy, type TaxonomyChanges } from './taxonomy.ts';

export const TAXONOMY_PK = 'TAXONOMY';

/** The sort key of one version. */
export function taxonomySortKey(version: number): string {
  return `VERSION#${String(version).padStart(10, '0')}`;
}

/** A second writer already stored this version. */
export class TaxonomyConflictError extends ConflictError {
  constructor(version: number) {
    super(`taxonomy version ${version} already exists; reload the latest version and revise again`);
  }
}

/**
 * Stores a taxonomy version. Storing the identical version again is a no-op (retries are safe); storing a different
 * taxonomy under an existing version number throws `TaxonomyConflictError`.
 */
export async function saveTaxonomy(records: RecordsPort, taxonomy: Taxonomy): Promise<void> {
  const t = parseTaxonomy(taxonomy);
  const { written } = await records.put(
    { pk: TAXONOMY_PK, sk: taxonomySortKey(t.version), version: t.version, taxonomy: t, createdAt: t.createdAt },
    { condition: { kind: 'absent' } },
  );
  if (written) return;
  const existing = await records.get(TAXONOMY_PK, taxonomySortKey(t.version));
  if (existing && JSON.stringify(parseTaxonomy(existing.taxonomy)) === JSON.stringify(t)) return;
  throw new TaxonomyConflictError(t.version);
}

/**
 * Loads one version, or the newest when `version` is omitted.
 * With no version stored at all, the newest is the seed `defaultTaxonomy()` (not written; see `ensureTaxonomy`).
 * @throws NotFoundError when an explicit version does not exist.
 */
export async function loadTaxonomy(records: RecordsPort, version?: number): Promise<Taxonomy> {
  if (version !== undefined) {
    const item = await records.get(TAXONOMY_PK, taxonomySortKey(version));
    if (!item) {
      if (version === 1) return defaultTaxonomy();
      throw new NotFoundError(`no taxonomy version ${version}`);
    }
    return parseTaxonomy(item.taxonomy);
  }
  const page = await records.query({ partition: TAXONOMY_PK, sort: { beginsWith: 'VERSION#' }, descending: true, limit: 1 });
  const newest = page.items[0];
  return newest ? parseTaxonomy(newest.taxonomy) : defaultTaxonomy();
}

/** Stores the seed as version 1 when nothing is stored yet; returns the newest version. */
export async function ensureTaxonomy(records: RecordsPort): Promise<Taxonomy> {
  const page = await records.query({ partition: TAXONOMY_PK, sort: { beginsWith: 'VERSION#' }, descending: true, limit: 1 });
  const newest = page.items[0];
  if (newest) return parseTaxonomy(newest.taxonomy);
  const seed = defaultTaxonomy();
  await saveTaxonomy(records, seed);
  return seed;
}

/** Every stored version, oldest first (summaries: version, parent, createdAt, note, mode ids). */
export async function listTaxonomyVersions(
  records: RecordsPort,
): Promise<{ version: number; parentVersion?: number; createdAt: string; note?: string; modes: string[] }[]> {
  const out: { version: number; parentVersion?: number; createdAt: string; note?: string; modes: string[] }[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: TAXONOMY_PK, sort: { beginsWith: 'VERSION#' }, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const t = parseTaxonomy(item.taxonomy);
      out.push({
        version: t.version,
        ...(t.parentVersion !== undefined ? { parentVersion: t.parentVersion } : {}),
        createdAt: t.createdAt,
        ...(t.note !== undefined ? { note: t.note } : {}),
        modes: t.modes.map((m) => m.id),
      });
    }
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/**
 * Revises the newest stored taxonomy and stores the result as the next version.
 *
 * @example
 * const v2 = await reviseStoredTaxonomy(ports.records, { remove: [{ id: 'ui-execution', mergedInto: 'other' }] }, ports.now());
 * @throws TaxonomyConflictError when another revision won the race; ValidationError for bad changes.
 */
export async function reviseStoredTaxonomy(records: RecordsPort, changes: TaxonomyChanges, now: Date = new Date()): Promise<Taxonomy> {
  const prev = await ensureTaxonomy(records);
  const next = reviseTaxonomy(prev, changes, now);
  await saveTaxonomy(records, next);
  return next;
}
