/**
 * A person labels a signal (from the review queue or any stored signal): the human label overrides whatever the
 * chain said, is recorded with who and when, moves the counts, resolves the review item, and, for a signal with
 * training consent, becomes a training example for the next retrain of the local classifier.
 */
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../errors.ts';
import { toFieldIssues } from '../shared/field-issues.ts';
import type { Ports } from '../ports/ports.ts';
import { SEVERITIES } from './judge-signal.ts';
import { loadSignalByKey } from './signal.ts';
import { ensureTaxonomy } from './taxonomy/taxonomy-store.ts';
import type { ModeLabel } from './mode-label.ts';
import { readLabel, writeLabel } from './write-label.ts';

export const HumanLabelInput = z.strictObject({
  /** Mode ids of the current taxonomy; [] = no failure mode. */
  modes: z.array(z.string().min(1).max(64)).max(8),
  severity: z.enum(SEVERITIES).optional(),
  /** Who labels (user id, email). */
  labeller: z.string().min(1).max(256),
  note: z.string().max(2000).optional(),
});
export type HumanLabelInput = z.input<typeof HumanLabelInput>;

/**
 * @example
 * await labelSignal(ports, 'feedback:e-17', { modes: ['scope-calibration'], labeller: 'ana@example.com' });
 * @throws ValidationError for an unknown mode or a bad body; NotFoundError for an unknown signal.
 */
export async function labelSignal(ports: Pick<Ports, 'records' | 'now'>, signalKey: string, input: unknown): Promise<ModeLabel> {
  const parsed = HumanLabelInput.safeParse(input);
  if (!parsed.success) throw new ValidationError('Invalid label', toFieldIssues(parsed.error.issues));
  const body = parsed.data;
  const taxonomy = await ensureTaxonomy(ports.records);
  const live = new Set(taxonomy.modes.map((m) => m.id));
  const unknown = body.modes.filter((m) => !live.has(m));
  if (unknown.length > 0) {
    throw new ValidationError(`Unknown mode(s) in taxonomy version ${taxonomy.version}: ${unknown.join(', ')}`, unknown.map((m) => ({ path: 'modes', message: `unknown mode ${m}` })));
  }
  const signal = await loadSignalByKey(ports, signalKey);
  if (!signal) throw new NotFoundError(`No stored signal ${signalKey}`);
  const previous = await readLabel(ports, signal.key);
  const label: ModeLabel = {
    signalKey: signal.key,
    model: signal.model,
    modes: [...new Set(body.modes)].map((mode) => ({ mode, ...(body.severity ? { severity: body.severity } : {}) })),
    source: 'human',
    confidence: 1,
    taxonomyVersion: taxonomy.version,
    labelledAt: ports.now().toISOString(),
    labelledBy: body.labeller,
    ...(body.note ? { note: body.note } : {}),
  };
  await writeLabel(ports, signal, label, previous ? previous : { ...label, modes: [], review: { reason: 'local-unsure', detail: '' } });
  return label;
}
