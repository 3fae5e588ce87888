/**
 * Bounds on free JSON fields (`context`, `trajectory.inline`, `metadata`, …): depth and size, checked on the parsed
 * value BEFORE anything recursive touches it. `JSON.parse` takes thousands of levels, but zod, `JSON.stringify`, the
 * DynamoDB marshaller and structured clones recurse and overflow the stack on them; an iterative scan does not.
 */
import type { z } from 'zod';
import type { FieldIssue } from './field-issues.ts';

/** Nesting levels a free JSON field may have (`{"a":{"b":1}}` is 2). */
export const FREE_JSON_MAX_DEPTH = 32;

/**
 * The depth of a JSON value, scanning iteratively and giving up past `limit` (answers `limit + 1` then), so a hostile
 * value costs at most its size. Scalars are depth 0; an object or array is 1 + its deepest member.
 */
export function jsonDepth(value: unknown, limit = FREE_JSON_MAX_DEPTH): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) {
      max = depth;
      if (max > limit) return max;
    }
    if (Array.isArray(v)) for (const x of v) stack.push([x, depth]);
    else for (const k in v) if (Object.hasOwn(v, k)) stack.push([(v as Record<string, unknown>)[k], depth]);
  }
  return max;
}

/** UTF-8 bytes of a value's JSON, or undefined when it is not serialisable. Call only on a value of bounded depth. */
function jsonBytes(value: unknown): number | undefined {
  try {
    const s = JSON.stringify(value);
    return s === undefined ? 0 : s.length * 3 <= 1024 ? s.length : Buffer.byteLength(s, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The issue of a free JSON field over its bounds, naming the field (`events[3].context`), or undefined when it fits.
 *
 * @example
 * const issue = freeJsonIssue(raw.context, 'events[3].context', { maxBytes: 16 * 1024 });
 */
export function freeJsonIssue(value: unknown, path: string, bounds: { maxBytes: number; maxDepth?: number }): FieldIssue | undefined {
  const maxDepth = bounds.maxDepth ?? FREE_JSON_MAX_DEPTH;
  if (jsonDepth(value, maxDepth) > maxDepth) return { path, message: `is nested deeper than ${maxDepth} levels` };
  const bytes = jsonBytes(value);
  if (bytes === undefined) return { path, message: 'is not serialisable JSON' };
  if (bytes > bounds.maxBytes) return { path, message: `exceeds ${bounds.maxBytes} bytes of JSON` };
  return undefined;
}

/**
 * A zod check for a free JSON field of a schema: depth first (iteratively), then size. Use on `z.unknown()` or on a
 * record of unknowns (zod does not descend into unknowns, so nothing recursive ran before it).
 *
 * @example
 * metadata: z.record(z.string(), z.unknown()).superRefine(boundedJson({ maxBytes: 64 * 1024 }))
 */
export function boundedJson(bounds: { maxBytes: number; maxDepth?: number }) {
  return (value: unknown, ctx: z.RefinementCtx): void => {
    const issue = freeJsonIssue(value, '', bounds);
    if (issue) ctx.addIssue({ code: 'custom', message: issue.message });
  };
}
