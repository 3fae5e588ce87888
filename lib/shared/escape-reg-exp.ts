/**
 * A string as a regular expression that matches it literally: every syntax character escaped, `/` too, and `-` as
 * `\x2d` (safe inside a character class, and valid with the `u` flag, which refuses `\-` outside one).
 *
 * @example
 * new RegExp(`(?<![\\w$])${escapeRegExp('$el.on')}(?![\\w$])`).test('call $el.on(x)'); // true
 */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&').replaceAll('-', '\\x2d');
}
