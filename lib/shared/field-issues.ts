import type { z } from 'zod';

/** One offending field: where it is (`events[3].rating`) and why it was refused. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * The first issue of a failed parse, its path dotted (`perTask.1.passed`; `''` for the value as a whole): what a
 * stored record's or row's error names.
 */
export function firstIssue(error: z.ZodError): FieldIssue {
  const issue = error.issues[0];
  return { path: issue?.path.map(String).join('.') ?? '', message: issue?.message ?? 'invalid' };
}

/** Renders a zod path as `events[3].trajectory.inline`, prefixed with `prefix` (e.g. `events[3]`). */
export function formatPath(path: ReadonlyArray<PropertyKey>, prefix = ''): string {
  let out = prefix;
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out === '' ? '(body)' : out;
}

/**
 * Flattens zod issues into `{ path, message }` pairs, one per offending field. A union failure is replaced by the
 * issues of its closest branch (the one with the fewest issues), so `trajectory.inline: too large` is reported
 * rather than zod's generic "Invalid input".
 *
 * @example
 * const r = Schema.safeParse(body);
 * if (!r.success) throw new ValidationError('Invalid request', toFieldIssues(r.error.issues));
 */
export function toFieldIssues(issues: ReadonlyArray<z.core.$ZodIssue>, prefix = ''): FieldIssue[] {
  const flat = flatten(issues, prefix, []);
  if (flat.length < 2) return flat;
  // One entry per field: several reasons for the same path are joined.
  const byPath = new Map<string, FieldIssue>();
  for (const issue of flat) {
    const seen = byPath.get(issue.path);
    if (!seen) byPath.set(issue.path, { ...issue });
    else if (!seen.message.includes(issue.message)) seen.message += `; ${issue.message}`;
  }
  return [...byPath.values()];
}

function flatten(issues: ReadonlyArray<z.core.$ZodIssue>, prefix: string, base: ReadonlyArray<PropertyKey>): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...issue.path];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      let best = issue.errors[0]!;
      for (const branch of issue.errors) if (branch.length < best.length) best = branch;
      if (best.length > 0) {
        out.push(...flatten(best, prefix, path));
        continue;
      }
    }
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: formatPath([...path, key], prefix), message: 'is not a known field' });
      continue;
    }
    out.push({ path: formatPath(path, prefix), message: issue.message });
  }
  return out;
}
