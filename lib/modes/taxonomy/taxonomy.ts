/**
 * The failure-mode taxonomy: a versioned list of modes (id, name, definition, examples) that every label names.
 *
 * A taxonomy is immutable once stored. Changing it (`reviseTaxonomy`) makes a NEW version; labels keep the
 * `taxonomyVersion` they were made under, so old counts stay meaningful. Mode ids are stable across versions: a
 * mode whose meaning changes keeps its id, a mode that is dropped is listed under `retired` (optionally with the id it
 * was merged into) so `resolveMode` can carry old labels forward when a classifier is retrained.
 *
 * Stored through the records port by `taxonomy-store.ts`.
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.ts';

/** The ids of the seed taxonomy (version 1), in display order. "other" is always present in every version. */
export const MODE_IDS = [
  'complex-instruction-following',
  'scope-calibration',
  'misunderstood-instructions',
  'communication',
  'resourcefulness',
  'ui-execution',
  'information-handling',
  'other',
] as const;
export type SeedModeId = (typeof MODE_IDS)[number];

/** The catch-all mode; it can be redefined but never removed. */
export const OTHER_MODE = 'other';

/** A mode id: lowercase kebab-case, safe inside record keys and URL path segments. */
export const ModeId = z
  .string()
  .min(2)
  .max(64)
  .regex(/^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/, { message: 'must be lowercase kebab-case, e.g. scope-calibration' });
export type ModeId = z.infer<typeof ModeId>;

export const ModeDefinition = z.strictObject({
  id: ModeId,
  name: z.string().min(1).max(120),
  /** What the mode means, written for a human reviewer and for the LLM judge's prompt. */
  definition: z.string().min(1).max(2000),
  /** A few short example comments or reports that belong to the mode (for reviewers and judge prompts). */
  examples: z.array(z.string().min(1).max(1000)).min(1).max(20),
});
export type ModeDefinition = z.infer<typeof ModeDefinition>;

export const RetiredMode = z.strictObject({
  id: ModeId,
  /** Version in which it was retired. */
  retiredIn: z.int().positive(),
  /** A live mode that took over its meaning; old labels map to it when retraining. */
  mergedInto: ModeId.optional(),
});
export type RetiredMode = z.infer<typeof RetiredMode>;

export const Taxonomy = z
  .strictObject({
    /** 1, 2, 3, … Each revision adds one. */
    version: z.int().positive(),
    /** The version this one was revised from; absent for the first. */
    parentVersion: z.int().positive().optional(),
    createdAt: z.iso.datetime({ offset: true }),
    /** Why this version exists (shown in history). */
    note: z.string().max(2000).optional(),
    modes: z.array(ModeDefinition).min(2).max(64),
    retired: z.array(RetiredMode).default([]),
  })
  .superRefine((t, ctx) => {
    const seen = new Set<string>();
    t.modes.forEach((m, i) => {
      if (seen.has(m.id)) ctx.addIssue({ code: 'custom', path: ['modes', i, 'id'], message: `duplicate mode id ${m.id}` });
      seen.add(m.id);
    });
    if (!seen.has(OTHER_MODE)) ctx.addIssue({ code: 'custom', path: ['modes'], message: `must contain the "${OTHER_MODE}" mode` });
    t.retired.forEach((r, i) => {
      if (seen.has(r.id)) ctx.addIssue({ code: 'custom', path: ['retired', i, 'id'], message: `${r.id} is both live and retired` });
      if (r.mergedInto !== undefined && !seen.has(r.mergedInto) && !t.retired.some((o) => o.id === r.mergedInto)) {
        ctx.addIssue({ code: 'custom', path: ['retired', i, 'mergedInto'], message: `unknown mode ${r.mergedInto}` });
      }
    });
  });
export type Taxonomy = z.output<typeof Taxonomy>;
export type TaxonomyInput = z.input<typeof Taxonomy>;

/** A change to a taxonomy. Applied in the order: remove, update, add. */
export const TaxonomyChanges = z.strictObject({
  /** New modes (their ids must not be live or retired already). */
  add: z.array(ModeDefinition).default([]),
  /** Replace fields of live modes (the id stays). */
  update: z
    .array(
      z.strictObject({
        id: ModeId,
        name: z.string().min(1).max(120).optional(),
        definition: z.string().min(1).max(2000).optional(),
        examples: z.array(z.string().min(1).max(1000)).min(1).max(20).optional(),
      }),
    )
    .default([]),
  /** Retire live modes; `mergedInto` names the live mode that absorbs their labels. */
  remove: z.array(z.strictObject({ id: ModeId, mergedInto: ModeId.optional() })).default([]),
  note: z.string().max(2000).optional(),
});
export type TaxonomyChanges = z.input<typeof TaxonomyChanges>;

/** Formats zod issues as the house `{ path, message }` list. */
function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * Validates an unknown value (a stored record, a config file, an API body) as a taxonomy.
 * @throws ValidationError listing every offending field.
 */
export function parseTaxonomy(value: unknown): Taxonomy {
  const r = Taxonomy.safeParse(value);
  if (!r.success) throw new ValidationError('invalid taxonomy', issuesOf(r.error));
  return r.data;
}

const SEED_MODES: ModeDefinition[] = [
  {
    id: 'complex-instruction-following',
    name: 'Complex instruction following',
    definition:
      'The request (or the project rules: AGENTS.md, .cursorrules, skill files, style guides) carried several constraints and the agent met some but dropped others: a forgotten step of a multi-step task, a rule from the codebase instructions ignored, a constraint lost as the conversation or task grew long.',
    examples: [
      'I asked for three things: rename the function, update the callers, and add a test. It did the rename only.',
      'Our AGENTS.md says to use pnpm and never npm; it ran npm install twice in the same session.',
      'After ~40 turns it forgot that we agreed to keep the public API unchanged and renamed exported types.',
    ],
  },
  {
    id: 'scope-calibration',
    name: 'Scope calibration',
    definition:
      'The agent understood the goal but did too much or too little: rewrote or reformatted far more than asked, added unrequested features, refactors or dependencies; or stopped short (a stub, a TODO, only one of the obvious places) when the task clearly needed more.',
    examples: [
      'Asked to fix one typo in the README, it reformatted every markdown file in the repo.',
      'I wanted a one-line null check; it added a whole validation layer and a new dependency.',
      'It only fixed the first occurrence and left the same bug in the other four handlers.',
    ],
  },
  {
    id: 'misunderstood-instructions',
    name: 'Misunderstood instructions',
    definition:
      'The agent solved a different problem than the one asked: it misread the intent, took an ambiguous request the wrong way without asking, confused which file, function, environment or direction was meant, or did the opposite of what was said.',
    examples: [
      'I said remove the retry logic, it added more retries.',
      'I meant the staging config, it edited production.yaml.',
      'Asked to explain the bug, it went ahead and rewrote the module instead.',
    ],
  },
  {
    id: 'communication',
    name: 'Communication',
    definition:
      'The work may be fine but the way the agent talks is not: over-explaining or apologising at length, walls of text, not saying what it changed, claiming success that was not verified, not asking a needed clarifying question, or asking too many, and tone problems.',
    examples: [
      'After I corrected it, it spent four paragraphs explaining why it was wrong instead of just fixing it.',
      'It said "all tests pass" but never ran them.',
      'Too verbose. I just want the diff, not an essay.',
    ],
  },
  {
    id: 'resourcefulness',
    name: 'Resourcefulness',
    definition:
      'The agent gave up or stalled where a capable engineer would find a way: did not look at the available tools, docs, logs or code; called a tool that does not exist; could not recover when a tool failed or was unavailable; asked the user for something it could find itself; looped on the same failing approach.',
    examples: [
      'It told me to check the logs myself even though it has shell access.',
      'The MCP server was down and it just stopped instead of reading the file directly.',
      'It retried the same failing command eight times without changing anything.',
    ],
  },
  {
    id: 'ui-execution',
    name: 'UI execution',
    definition:
      'Front-end and visual work that does not come out right: layout, styling, responsiveness, accessibility, markup that does not match the design (Figma, screenshot), broken components in the browser, and failures when driving a browser or UI.',
    examples: [
      'The Figma MCP gave it the frame but the HTML it produced was a flat list of divs with absolute positions.',
      'The modal looks fine on desktop but the close button is off-screen on mobile.',
      'Dark mode colours are wrong, the text is unreadable on the new cards.',
    ],
  },
  {
    id: 'information-handling',
    name: 'Information handling',
    definition:
      'The agent got facts wrong or mishandled information: hallucinated APIs, flags, files or package versions; used stale or outdated knowledge; misread the context, logs or tool output it was given; lost or leaked information (secrets in code, wrong data copied).',
    examples: [
      'It used a pandas method that does not exist (DataFrame.to_markdown_table).',
      'It quoted the error from the previous run, not the one I pasted.',
      'It hard-coded my API key into the config file it committed.',
    ],
  },
  {
    id: 'other',
    name: 'Other',
    definition:
      'A real problem with the agent or its product surface that none of the other modes describes: latency, crashes, billing, quota, editor integration bugs, model availability, and anything the taxonomy does not yet cover. Recurring "other" complaints are candidates for new modes.',
    examples: [
      'The agent panel freezes VS Code for ten seconds every time it starts.',
      'Requests have been timing out all morning.',
      'It keeps logging me out of the CLI.',
    ],
  },
];

/**
 * The seed taxonomy (version 1): the seven modes named in the Cursor talk plus "other".
 * `createdAt` is fixed so the seed is the same value everywhere.
 */
export function defaultTaxonomy(): Taxonomy {
  return parseTaxonomy({
    version: 1,
    createdAt: '2026-12-01T00:00:00.000Z',
    note: 'Seed taxonomy: the failure modes Cursor names for its outer loop, plus "other".',
    modes: structuredClone(SEED_MODES),
    retired: [],
  });
}

/**
 * Applies changes to a taxonomy and returns the next version; `prev` is not modified.
 *
 * @example
 * const v2 = reviseTaxonomy(defaultTaxonomy(), {
 *   add: [{ id: 'latency', name: 'Latency', definition: 'Too slow to be useful.', examples: ['took 3 minutes to answer'] }],
 *   note: 'latency complaints recur in cluster 17',
 * });
 * // v2.version === 2, v2.parentVersion === 1
 * @throws ValidationError for an unknown, duplicate or protected id, or when the result is not a valid taxonomy.
 */
export function reviseTaxonomy(prev: Taxonomy, changes: TaxonomyChanges, now: Date = new Date()): Taxonomy {
  const parsed = TaxonomyChanges.safeParse(changes);
  if (!parsed.success) throw new ValidationError('invalid taxonomy changes', issuesOf(parsed.error));
  const c = parsed.data;
  if (c.add.length === 0 && c.update.length === 0 && c.remove.length === 0) {
    throw new ValidationError('a revision must add, update or remove at least one mode');
  }
  const issues: { path: string; message: string }[] = [];
  const version = prev.version + 1;
  let modes = structuredClone(prev.modes);
  const retired = structuredClone(prev.retired);
  const removedNow = new Set(c.remove.map((r) => r.id));

  c.remove.forEach((r, i) => {
    if (r.id === OTHER_MODE) issues.push({ path: `remove.${i}.id`, message: `"${OTHER_MODE}" cannot be removed` });
    else if (!modes.some((m) => m.id === r.id)) issues.push({ path: `remove.${i}.id`, message: `no live mode ${r.id}` });
    if (r.mergedInto !== undefined && (removedNow.has(r.mergedInto) || !modes.some((m) => m.id === r.mergedInto))) {
      issues.push({ path: `remove.${i}.mergedInto`, message: `${r.mergedInto} is not a live mode of the new version` });
    }
    retired.push({ id: r.id, retiredIn: version, ...(r.mergedInto ? { mergedInto: r.mergedInto } : {}) });
  });
  modes = modes.filter((m) => !removedNow.has(m.id));

  c.update.forEach((u, i) => {
    const m = modes.find((x) => x.id === u.id);
    if (!m) {
      issues.push({ path: `update.${i}.id`, message: `no live mode ${u.id}` });
      return;
    }
    if (u.name !== undefined) m.name = u.name;
    if (u.definition !== undefined) m.definition = u.definition;
    if (u.examples !== undefined) m.examples = u.examples;
  });

  c.add.forEach((a, i) => {
    if (modes.some((m) => m.id === a.id)) issues.push({ path: `add.${i}.id`, message: `${a.id} is already a live mode` });
    else if (retired.some((r) => r.id === a.id)) issues.push({ path: `add.${i}.id`, message: `${a.id} was retired; ids are never reused` });
    else modes.push(a);
  });

  if (issues.length > 0) throw new ValidationError('invalid taxonomy changes', issues);
  return parseTaxonomy({
    version,
    parentVersion: prev.version,
    createdAt: now.toISOString(),
    ...(c.note !== undefined ? { note: c.note } : {}),
    modes,
    retired,
  });
}

/** The live mode ids of a taxonomy, in its order. */
export function modeIds(taxonomy: Taxonomy): string[] {
  return taxonomy.modes.map((m) => m.id);
}

/**
 * Maps a mode id from any earlier version onto the live modes of `taxonomy`: a live id maps to itself, a retired one
 * to the mode it was merged into (following chains), and anything else to `undefined` (the label is dropped).
 */
export function resolveMode(taxonomy: Taxonomy, id: string): string | undefined {
  const live = new Set(modeIds(taxonomy));
  let current: string | undefined = id;
  for (let hops = 0; current !== undefined && hops <= taxonomy.retired.length; hops++) {
    if (live.has(current)) return current;
    const r: RetiredMode | undefined = taxonomy.retired.find((x) => x.id === current);
    current = r?.mergedInto;
  }
  return undefined;
}
