/**
 * DynamoDB and S3 order strings by their UTF-8 bytes, which is Unicode code point order. JavaScript's `<` compares
 * UTF-16 code units and disagrees for characters above U+FFFF versus U+E000–U+FFFF; SQLite's BINARY collation on a
 * UTF-8 database compares bytes (memcmp) and agrees with DynamoDB. These helpers give JS the same order.
 */

/** Negative, zero or positive as `a` sorts before, with or after `b` in UTF-8 byte order. */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * The smallest string greater than every string that starts with `prefix` (in code point order), or undefined
 * when there is none. `beginsWith(p)` is then the index-friendly range `p <= s < successor(p)`.
 */
export function prefixSuccessor(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) {
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return String.fromCodePoint(...points, next);
    }
  }
  return undefined;
}
