/**
 * String and number literals, found by a lexical heuristic that suits Python, JavaScript/TypeScript, Go, Java and
 * Ruby alike: quoted strings ('…', "…", `…` without `${`), and numbers. No parsing: a quote inside a comment can
 * produce a spurious literal, which only matters if the same text is then added to source.
 */

/** Literals shorter than this are too common to mean anything (`"utf-8"`, `1000`). */
export const MIN_LITERAL_LENGTH = 8;

const STRING = /(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g;
const NUMBER = /(?<![\w.])-?\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?(?![\w.])/g;

/** Literal text that appears in every codebase and says nothing about copying from the tests. */
const COMMON = /^(?:__\w+__|[\W_]*|https?:\/\/|[a-z]+(?:[-_][a-z]+)*\.(?:py|js|ts|json|txt))$/;

export interface Literal {
  /** `s:` + the string's content, or `n:` + the number as written (without `_`). */
  key: string;
  /** As it appears, for evidence. */
  text: string;
}

/**
 * Literals of at least `MIN_LITERAL_LENGTH` characters (content, for strings) in a piece of code.
 *
 * @example
 * extractLiterals('assert slug("Hello World!") == "hello-world"') // [{ key: 's:Hello World!' … }, { key: 's:hello-world' … }]
 */
export function extractLiterals(code: string, minLength = MIN_LITERAL_LENGTH): Literal[] {
  const out: Literal[] = [];
  const spans: Array<[number, number]> = [];
  for (const m of code.matchAll(STRING)) {
    spans.push([m.index, m.index + m[0].length]);
    const content = m[2]!;
    if (m[1] === '`' && content.includes('${')) continue;
    if (content.length < minLength || COMMON.test(content)) continue;
    out.push({ key: `s:${content}`, text: m[0] });
  }
  for (const m of code.matchAll(NUMBER)) {
    if (spans.some(([a, b]) => m.index >= a && m.index < b)) continue;
    const digits = m[0].replaceAll('_', '');
    if (digits.replace(/^-/, '').length < minLength) continue;
    out.push({ key: `n:${digits}`, text: m[0] });
  }
  return out;
}
