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
  const items: ModeExample[] = [];
  let cursor = q.data.cursor;
  // Filtering by model happens in memory: scan a few pages at most to fill one.
  for (let pages = 0; pages < 10 && items.length < q.data.limit; pages++) {
    const page = await ports.records.query({ partition: modeKeys.examplePartition(mode), descending: true, limit: q.data.limit, ...(cursor ? { cursor } : {}) });
    for (const item of page.items) {
      const example = modeExampleRecord.decode(item);
      if (q.data.model === undefined || example.model === q.data.model) items.push(example);
    }
    cursor = page.cursor;
    if (!cursor) break;
  }
  const cases = await ports.records.query({ partition: modeKeys.modeCasesPartition(mode), descending: true, limit: 100 });
  return {
    mode,
    taxonomyVersion: taxonomy.version,
    ...(definition ? { name: definition.name, definition: definition.definition } : { retiredOrUnknown: true }),
    items: items.slice(0, q.data.limit),
    ...(cursor ? { cursor } : {}),
    // The page is the mode's: its cases need not repeat it.
    cases: cases.items.map((item) => {
      const { mode: _mode, ...modeCase } = modeCaseRecord.decode(item);
      return modeCase;
    }),
  };
}
