/**
 * The project's labelled set of comments and reports (`data/modes/labelled.jsonl`, one JSON object a line), with a
 * fixed split: `train` for fitting, `heldout` for the numbers `npm run eval:classifier` prints. See
 * `data/modes/README.md` for how it was written and labelled.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';
import { ModeId } from '../taxonomy/taxonomy.ts';
import type { LabelledExample } from './local-classifier.ts';
import { signalText } from './signal-text.ts';

/**
 * Where the set is read from: `FLYWHEEL_MODES_LABELLED_SET` when set (a bundled Lambda ships the file beside its
 * handler), else `data/modes/labelled.jsonl` relative to this module in the source tree.
 */
export const DEFAULT_LABELLED_SET =
  process.env.FLYWHEEL_MODES_LABELLED_SET ?? fileURLToPath(new URL('../../../data/modes/labelled.jsonl', import.meta.url));

export const LabelledRecord = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9-]+$/),
    split: z.enum(['train', 'heldout']),
    kind: z.enum(['comment', 'report']),
    source: z.enum(['user', 'internal', 'automated']),
    surface: z.enum(['ide', 'cli', 'web', 'slack', 'api']),
    rating: z.enum(['up', 'down', 'none']),
    /** Reports have a title; comments do not. */
    title: z.string().min(1).optional(),
    text: z.string().min(1),
    /** Seed-taxonomy mode ids; [] = no failure mode (praise or neutral). */
    modes: z.array(ModeId),
    /** The labeller found it could reasonably be read another way. */
    ambiguous: z.boolean().default(false),
  })
  .refine((r) => (r.kind === 'report') === (r.title !== undefined), { message: 'a report has a title and a comment has none' });
export type LabelledRecord = z.output<typeof LabelledRecord>;

/**
 * Reads and validates the set.
 * @throws ValidationError naming the first bad line, or duplicate ids.
 */
export function readLabelledSet(path: string = DEFAULT_LABELLED_SET): LabelledRecord[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const out: LabelledRecord[] = [];
  const ids = new Set<string>();
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e) {
      throw new ValidationError(`${path}:${i + 1}: not JSON (${(e as Error).message})`);
    }
    const r = LabelledRecord.safeParse(json);
    if (!r.success) {
      throw new ValidationError(
        `${path}:${i + 1}: invalid labelled record`,
        r.error.issues.map((x) => ({ path: x.path.map(String).join('.'), message: x.message })),
      );
    }
    if (ids.has(r.data.id)) throw new ValidationError(`${path}:${i + 1}: duplicate id ${r.data.id}`);
    ids.add(r.data.id);
    out.push(r.data);
  });
  return out;
}

/** Records as training examples (text through `signalText`, labels from the seed). */
export function toLabelledExamples(records: readonly LabelledRecord[]): LabelledExample[] {
  return records.map((r) => ({
    id: r.id,
    text: signalText({ title: r.title, body: r.text }) ?? r.text,
    modes: [...r.modes],
    labelSource: 'seed',
  }));
}
