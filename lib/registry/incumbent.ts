/**
 * The registry's incumbent: the one checkpoint a team serves by default, which sweeps compare new checkpoints against
 * and experiments take as their control. Shipping an experiment sets it (`decideExperiment`); every change is kept as a
 * history item beside it.
 */
import { ConflictError } from '../errors.ts';
import type { RecordsPort } from '../ports/records.ts';
import { incumbentHistoryRecord, incumbentRecord } from './record-codecs.ts';
import { registryKeys } from './record-keys.ts';

export interface Incumbent {
  checkpoint: string;
  /** When it became the incumbent. */
  since: string;
  /** The experiment that shipped it, when one did. */
  experimentId?: string;
}

/** Writers that lose a race this many times in a row give up (409): something is writing in a loop. */
const MAX_ATTEMPTS = 5;

/**
 * The current incumbent, or undefined when none was ever set.
 *
 * @example
 * const incumbent = await getIncumbent(ports.records); // { checkpoint: 'coder-7b:step-1200', since: '2026-12-04T…', experimentId: 'exp-1' }
 */
export async function getIncumbent(records: RecordsPort): Promise<Incumbent | undefined> {
  const stored = incumbentRecord.decodeIfPresent(await records.get(registryKeys.incumbent.pk, registryKeys.incumbent.sk));
  if (!stored) return undefined;
  return { checkpoint: stored.checkpoint, since: stored.since, ...(stored.experimentId ? { experimentId: stored.experimentId } : {}) };
}

/**
 * Makes `value.checkpoint` the incumbent (conditional on the revision read, so two writers never both believe they
 * won), and keeps a history item. Setting the checkpoint that already is the incumbent changes nothing.
 *
 * @example
 * await setIncumbent(ports.records, { checkpoint: 'coder-7b:step-1400', experimentId: 'exp-1', by: 'ana' }, ports.now());
 */
export async function setIncumbent(records: RecordsPort, value: { checkpoint: string; experimentId?: string; by: string }, now: Date): Promise<void> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = incumbentRecord.decodeIfPresent(await records.get(registryKeys.incumbent.pk, registryKeys.incumbent.sk));
    if (current && current.checkpoint === value.checkpoint) return;
    const since = now.toISOString();
    const next = {
      kind: 'incumbent' as const,
      checkpoint: value.checkpoint,
      since,
      by: value.by,
      revision: (current?.revision ?? -1) + 1,
      ...(value.experimentId ? { experimentId: value.experimentId } : {}),
    };
    const { written } = await records.put(incumbentRecord.encode(next), {
      condition: current ? { kind: 'unchanged', field: 'revision', value: current.revision } : { kind: 'absent' },
    });
    if (!written) continue;
    // After the current item: a crash between the two loses one history line, never the incumbent itself.
    await records.put(
      incumbentHistoryRecord.encode({
        kind: 'incumbent-history',
        checkpoint: value.checkpoint,
        since,
        by: value.by,
        ...(value.experimentId ? { experimentId: value.experimentId } : {}),
        ...(current ? { previous: current.checkpoint } : {}),
      }),
    );
    return;
  }
  throw new ConflictError(`the incumbent changed ${MAX_ATTEMPTS} times while ${value.checkpoint} was being set: try again`);
}

/**
 * The incumbent's history, newest first.
 *
 * @example
 * const [latest, before] = await listIncumbentHistory(ports.records);
 */
export async function listIncumbentHistory(records: RecordsPort, options: { limit?: number } = {}): Promise<Array<Incumbent & { by: string; previous?: string }>> {
  const page = await records.query({ partition: registryKeys.incumbent.pk, sort: { beginsWith: registryKeys.incumbentHistoryPrefix }, descending: true, limit: options.limit ?? 100 });
  return page.items.map((item) => {
    const h = incumbentHistoryRecord.decode(item);
    return { checkpoint: h.checkpoint, since: h.since, by: h.by, ...(h.experimentId ? { experimentId: h.experimentId } : {}), ...(h.previous ? { previous: h.previous } : {}) };
  });
}
