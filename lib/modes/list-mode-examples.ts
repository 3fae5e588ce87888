/** A mode's page: its definition, its newest examples (evidence included), and the eval cases made from it. */
import { z } from 'zod';
import { toFieldIssues } from '../shared/field-issues.ts';
import { ValidationError } from '../errors.ts';
import type { Ports } from '../ports/ports.ts';
import { modeCaseRecord, modeExampleRecord, type ModeExample } from './record-codecs.ts';
import { modeKeys } from './record-keys.ts';
import { ensureTaxonomy } from './taxonomy/taxonomy-store.ts';
import { ModeId } from './taxonomy/taxonomy.ts';

export const ModeExamplesQuery = z.strictObject({
  model: z.string().min(1).max(256).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(20),
  cursor: z.string().min(1).max(2048).optional(),
});

/**
 * @example
 * const page = await listModeExamples(ports, 'scope-calibration', { model: 'ckpt-a', limit: 10 });
 */
export async function listModeExamples(ports: Pick<Ports, 'records'>, mode: string, query: unknown) {
  const m = ModeId.safeParse(mode);
  const q = ModeExamplesQuery.safeParse(query ?? {});
  if (!m.success || !q.success) {
    throw new ValidationError('Invalid request', [
      ...(m.success ? [] : toFieldIssues(m.error.issues, 'mode')),
      ...(q.success ? [] : toFieldIssues(q.error.issues)),
    ]);
  }
  const taxonomy = await ensureTaxonomy(ports.records);
  const definition = taxonomy.modes.find((x) => x.id === mode);
  // One query per page: with --model the examples of that checkpoint are their own index partition (gsi1
  // `MODEEXMODEL#<mode>#<model>`), so the page is full whenever that many exist and the cursor is the store's own.
  const page = await ports.records.query({
    ...(q.data.model !== undefined ? { index: 'gsi1' as const, partition: modeKeys.exampleByModel(mode, q.data.model) } : { partition: modeKeys.examplePartition(mode) }),
    descending: true,
    limit: q.data.limit,
    ...(q.data.cursor ? { cursor: q.data.cursor } : {}),
  });
  const items: ModeExample[] = page.items.map((item) => modeExampleRecord.decode(item));
  const cursor = page.cursor;
  const cases = await ports.records.query({ partition: modeKeys.modeCasesPartition(mode), descending: true, limit: 100 });
  return {
    mode,
    taxonomyVersion: taxonomy.version,
    ...(definition ? { name: definition.name, definition: definition.definition } : { retiredOrUnknown: true }),
    items,
    ...(cursor ? { cursor } : {}),
    // The page is the mode's: its cases need not repeat it.
    cases: cases.items.map((item) => {
      const { mode: _mode, ...modeCase } = modeCaseRecord.decode(item);
      return modeCase;
    }),
  };
}

/**
 * Gives examples stored before the per-checkpoint index existed their index keys (`MODEEXMODEL#<mode>#<model>`), so
 * `?model=` finds them. Idempotent: examples that have the keys are left alone. Walks the example partitions of every
 * mode the newest taxonomy names, live or retired.
 *
 * @example
 * const { reindexed } = await reindexModeExamples(ports); // `flywheel modes reindex-examples`
 */
export async function reindexModeExamples(ports: Pick<Ports, 'records'>): Promise<{ modes: number; scanned: number; reindexed: number }> {
  const taxonomy = await ensureTaxonomy(ports.records);
  const modes = [...new Set([...taxonomy.modes.map((m) => m.id), ...taxonomy.retired.map((r) => r.id)])];
  let scanned = 0;
  let reindexed = 0;
  for (const mode of modes) {
    let cursor: string | undefined;
    do {
      const page = await ports.records.query({ partition: modeKeys.examplePartition(mode), limit: 1000, ...(cursor ? { cursor } : {}) });
      const stale = page.items.filter((item) => item.gsi1pk === undefined);
      scanned += page.items.length;
      if (stale.length > 0) await ports.records.putMany(stale.map((item) => modeExampleRecord.encode(modeExampleRecord.decode(item))));
      reindexed += stale.length;
      cursor = page.cursor;
    } while (cursor);
  }
  return { modes: modes.length, scanned, reindexed };
}
