/**
 * Code fingerprints that survive reformatting: the text is cut into tokens (identifiers, numbers, string literals by
 * their content, operators), with whitespace, comments, quotes, semicolons, commas and parentheses dropped and
 * `var`/`let`/`const` read as one, so a published copy that was reformatted, re-quoted or transpiled (types
 * stripped) keeps most of its tokens in order. Every run of `SHINGLE_TOKENS` tokens is hashed, and winnowing keeps
 * the smallest hash of every `WINNOW_WINDOW` consecutive ones (Schleimer et al., "Winnowing", SIGMOD 2003): two texts
 * that share a run of `SHINGLE_TOKENS + WINNOW_WINDOW - 1` tokens share at least one fingerprint, and a third of the
 * hashes is enough to index. Exact lines are hashed too (trimmed), for copies that were not reformatted at all.
 */

/** Tokens per shingle. */
export const SHINGLE_TOKENS = 6;
/** Shingles per winnowing window: any common run of SHINGLE_TOKENS + WINNOW_WINDOW - 1 tokens is found. */
export const WINNOW_WINDOW = 5;

export type CodeDialect = 'python' | 'script';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Base of the polynomial that combines token hashes into a shingle hash. */
const SHINGLE_BASE = 0x01000193;

/** Punctuation dropped (`;` `,` `(` `)`): formatters and transpilers add or remove it freely. */
function isDropped(c: number): boolean {
  return c === 59 || c === 44 || c === 40 || c === 41;
}
/** Declaration keywords read as one (a downlevel transpile turns `const` into `var`). */
const DECLARATION_HASHES = new Set(['var', 'let', 'const'].map((w) => hashString(w, FNV_OFFSET)));
const LET_HASH = hashString('let', FNV_OFFSET);
const STRING_SEED = 0x9e3779b9;

function hashString(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

function hashRange(text: string, start: number, end: number, seed: number): number {
  let h = seed;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

function isIdentStart(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 36 || c > 127;
}

function isIdentPart(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57);
}

/** Which dialect a file's comments follow, from its name (`#` comments in Python, `//` and `/* *\/` elsewhere). */
export function dialectOf(path: string): CodeDialect {
  return /\.pyi?$/.test(path) ? 'python' : 'script';
}

/**
 * The token hashes of a text.
 *
 * @example
 * codeTokens("const a = 'x'; // note", 'script').length // 4: let, a, =, "x"
 */
/** Reused between calls (at most one token per character): a fresh zeroed buffer per file costs more than the scan. */
let scratch = new Uint32Array(1 << 16);

export function codeTokens(text: string, dialect: CodeDialect): Uint32Array {
  if (scratch.length < text.length + 1) scratch = new Uint32Array(Math.max(text.length + 1, scratch.length * 2));
  const out = scratch;
  let n = 0;
  const push = (h: number) => {
    out[n++] = h;
  };
  const len = text.length;
  let i = 0;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11) {
      i++;
      continue;
    }
    // Comments.
    if (c === 35 && dialect === 'python') {
      while (i < len && text.charCodeAt(i) !== 10) i++;
      continue;
    }
    if (c === 47 && dialect === 'script' && i + 1 < len) {
      const d = text.charCodeAt(i + 1);
      if (d === 47) {
        while (i < len && text.charCodeAt(i) !== 10) i++;
        continue;
      }
      if (d === 42) {
        const end = text.indexOf('*/', i + 2);
        i = end < 0 ? len : end + 2;
        continue;
      }
    }
    // String literals, by their content: the quote style is dropped.
    if (c === 39 || c === 34 || c === 96) {
      const triple = dialect === 'python' && c !== 96 && text.charCodeAt(i + 1) === c && text.charCodeAt(i + 2) === c;
      const open = triple ? 3 : 1;
      let j = i + open;
      for (;;) {
        if (j >= len) break;
        const e = text.charCodeAt(j);
        if (e === 92) {
          j += 2;
          continue;
        }
        if (e === c && (!triple || (text.charCodeAt(j + 1) === c && text.charCodeAt(j + 2) === c))) break;
        // An unterminated one-line string ends at the line's end (a snippet may cut one).
        if (e === 10 && !triple && c !== 96) break;
        j++;
      }
      push(hashRange(text, i + open, Math.min(j, len), STRING_SEED));
      i = Math.min(len, j + (triple ? 3 : 1));
      continue;
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < len && isIdentPart(text.charCodeAt(j))) j++;
      const h = hashRange(text, i, j, FNV_OFFSET);
      push(j - i <= 5 && DECLARATION_HASHES.has(h) ? LET_HASH : h);
      i = j;
      continue;
    }
    if (c >= 48 && c <= 57) {
      let j = i + 1;
      while (j < len && (isIdentPart(text.charCodeAt(j)) || text.charCodeAt(j) === 46)) j++;
      push(hashRange(text, i, j, FNV_OFFSET));
      i = j;
      continue;
    }
    if (!isDropped(c)) push(Math.imul(c + 1, 0x27d4eb2d) >>> 0);
    i++;
  }
  return out.slice(0, n);
}

/** The hash of every run of SHINGLE_TOKENS tokens (a text with fewer tokens gives one hash of them all). */
export function shingleHashes(tokens: Uint32Array): Uint32Array {
  if (tokens.length === 0) return new Uint32Array(0);
  const k = Math.min(SHINGLE_TOKENS, tokens.length);
  const out = new Uint32Array(tokens.length - k + 1);
  let top = 1;
  for (let i = 1; i < k; i++) top = Math.imul(top, SHINGLE_BASE);
  let h = 0;
  for (let i = 0; i < k; i++) h = (Math.imul(h, SHINGLE_BASE) + tokens[i]!) | 0;
  out[0] = h >>> 0;
  for (let i = k; i < tokens.length; i++) {
    h = (Math.imul((h - Math.imul(tokens[i - k]!, top)) | 0, SHINGLE_BASE) + tokens[i]!) | 0;
    out[i - k + 1] = h >>> 0;
  }
  return out;
}

/** Winnowing: the rightmost smallest hash of every window of WINNOW_WINDOW shingles, each kept once, sorted and unique. */
export function winnow(hashes: Uint32Array): Uint32Array {
  const w = Math.min(WINNOW_WINDOW, hashes.length);
  if (w === 0) return new Uint32Array(0);
  // At most one pick per window.
  const picked = new Uint32Array(hashes.length - w + 1);
  let n = 0;
  let minAt = -1;
  for (let end = w - 1; end < hashes.length; end++) {
    const start = end - w + 1;
    if (minAt < start) {
      minAt = start;
      for (let j = start + 1; j <= end; j++) if (hashes[j]! <= hashes[minAt]!) minAt = j;
      picked[n++] = hashes[minAt]!;
    } else if (hashes[end]! <= hashes[minAt]!) {
      minAt = end;
      picked[n++] = hashes[minAt]!;
    }
  }
  return uniqueSorted(picked.subarray(0, n));
}

function uniqueSorted(values: Uint32Array): Uint32Array {
  values.sort();
  let n = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[n - 1]) values[n++] = values[i]!;
  return values.subarray(0, n);
}

/**
 * The winnowed fingerprints of a text (sorted, unique).
 *
 * @example
 * const a = codeFingerprints("def f(x):\n    return x * 2  # twice\n", 'python');
 * const b = codeFingerprints('def f(x): return x*2', 'python'); // the same fingerprints
 */
export function codeFingerprints(text: string, dialect: CodeDialect): Uint32Array {
  return winnow(shingleHashes(codeTokens(text, dialect)));
}

/** The hash of one trimmed line (what the exact-line index keys on). */
export function lineHash(line: string): number {
  return hashString(line, FNV_OFFSET);
}

/** A line long and specific enough to count as evidence on its own (the workspace probe's rule). */
export function isProbeLine(trimmed: string): boolean {
  if (trimmed.length < 12 || !/[A-Za-z0-9_]{3}/.test(trimmed)) return false;
  return !(/^(?:\/\/|#|\*|\/\*)/.test(trimmed) && trimmed.length < 24);
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0 || c === 0xfeff;
}

/** The hashes of a text's probe lines (sorted, unique). */
export function probeLineHashes(text: string): Uint32Array {
  const out: number[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    // Trimmed by hand: only lines long enough to count are cut out of the text.
    let a = start;
    let b = end;
    while (a < b && isSpace(text.charCodeAt(a))) a++;
    while (b > a && isSpace(text.charCodeAt(b - 1))) b--;
    if (b - a >= 12) {
      const line = text.slice(a, b);
      if (isProbeLine(line)) out.push(lineHash(line));
    }
    start = end + 1;
  }
  return uniqueSorted(Uint32Array.from(out));
}
