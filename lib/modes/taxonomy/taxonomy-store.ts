/**
 * Taxonomy versions in the records port: one immutable item per version, all in one partition so the newest is a
 * single descending query.
 *
 * Keys (`../record-keys.ts`): pk `TAXONOMY`, sk `VERSION#<version, 10 digits>` (zero-padded: string order is numeric).
 * Writes are conditional (`absent`), so two concurrent revisions of the same parent cannot both become version n+1:
 * the loser gets a `Flywheel.ConflictError` and can reload and retry.
 */
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { taxonomyRecord } from '../record-codecs.ts';
import { TAXONOMY_PK, TAXONOMY_VERSION_PREFIX, taxonomySortKey } from '../record-keys.ts';
import { defaultTaxonomy, parseTaxonomy, reviseTaxonomy, type Taxonomy, type TaxonomyChanges } from './taxonomy.ts';

/** A second writer already stored this version. Named `ErrorNames.conflict`, as every conflict is (409). */
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
  const { written } = await records.put(taxonomyRecord.encode({ version: t.version, taxonomy: t, createdAt: t.createdAt }), {
    condition: { kind: 'absent' },
  });
  if (written) return;
  const existing = taxonomyRecord.decodeIfPresent(await records.get(TAXONOMY_PK, taxonomySortKey(t.version)));
  if (existing && JSON.stringify(existing.taxonomy) === JSON.stringify(t)) return;
  throw new TaxonomyConflictError(t.version);
}

/**
 * Loads one version, or the newest when `version` is omitted.
 * With no version stored at all, the newest is the seed `defaultTaxonomy()` (not written; see `ensureTaxonomy`).
 * @throws NotFoundError when an explicit version does not exist.
 */
export async function loadTaxonomy(records: RecordsPort, version?: number): Promise<Taxonomy> {
  if (version !== undefined) {
    const stored = taxonomyRecord.decodeIfPresent(await records.get(TAXONOMY_PK, taxonomySortKey(version)));
    if (!stored) {
      if (version === 1) return defaultTaxonomy();
      throw new NotFoundError(`no taxonomy version ${version}`);
    }
    return stored.taxonomy;
  }
  return (await newestStored(records)) ?? defaultTaxonomy();
}

/** The newest stored version, if any. */
async function newestStored(records: RecordsPort): Promise<Taxonomy | undefined> {
  const page = await records.query({ partition: TAXONOMY_PK, sort: { beginsWith: TAXONOMY_VERSION_PREFIX }, descending: true, limit: 1 });
  return taxonomyRecord.decodeIfPresent(page.items[0])?.taxonomy;
}

/** Stores the seed as version 1 when nothing is stored yet; returns the newest version. */
export async function ensureTaxonomy(records: RecordsPort): Promise<Taxonomy> {
  const newest = await newestStored(records);
  if (newest) return newest;
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
    const page = await records.query({ partition: TAXONOMY_PK, sort: { beginsWith: TAXONOMY_VERSION_PREFIX }, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const t = taxonomyRecord.decode(item).taxonomy;
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
