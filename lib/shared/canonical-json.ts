/**
 * JSON with object keys sorted at every level: two inputs that are the same value give the same text, whatever order
 * their keys were written in. The workflows drivers send and compare execution inputs this way, so a re-start of the
 * same sweep with the same request is recognised as the same execution.
 *
 * @example
 * canonicalJson({ b: 1, a: { d: 2, c: 3 } }); // '{"a":{"c":3,"d":2},"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
