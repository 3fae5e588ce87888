/**
 * A candidate's profile (`CandidateProfile`): the entry point a user calls, whether it is public API, how many
 * statements it removes and which character spans it deletes. The strategies build it from the outline and the
 * splices they apply; identical siblings are found over the whole repository (`identical-siblings.ts`).
 */
import type { CandidateProfile } from '../candidate.ts';
import { codeLineSet, lineOf, lineStarts } from '../parse/code-lines.ts';
import type { OutlineSymbol, SourceOutline } from '../parse/source-outline.ts';
import type { Splice } from './make-candidate.ts';

const starts = new WeakMap<SourceOutline, number[]>();

function startsOf(outline: SourceOutline): number[] {
  let s = starts.get(outline);
  if (!s) starts.set(outline, (s = lineStarts(outline.text)));
  return s;
}

/** A Python name private by convention: a leading underscore, dunders (`__init__`, `__eq__`) aside. */
function isUnderscored(name: string): boolean {
  return name.startsWith('_') && !(name.startsWith('__') && name.endsWith('__'));
}

/** A Python module is private when a folder or its own name has a leading underscore (`_compat.py`, `_internal/`). */
function isPrivateModule(path: string): boolean {
  return path
    .replace(/\.py$/, '')
    .split('/')
    .some((part) => isUnderscored(part));
}

/**
 * Public API: TypeScript/JavaScript — exported, or a public method (not `private`, no leading `_`) of an exported
 * class; Python — no leading underscore on the symbol, its class or its module, and listed in `__all__` when the
 * module defines one.
 *
 * @example
 * isPublicSymbol(outline, outline.symbols.find((s) => s.name === 'area')!); // true for `def area` in pkg/shapes.py
 */
export function isPublicSymbol(outline: SourceOutline, symbol: OutlineSymbol): boolean {
  const parent = symbol.parent !== undefined ? outline.symbols.find((s) => s.kind === 'class' && s.qualifiedName === symbol.parent) : undefined;
  const topName = parent?.name ?? symbol.name;
  if (outline.language === 'python') {
    if (isPrivateModule(outline.path) || isUnderscored(topName) || isUnderscored(symbol.name)) return false;
    return outline.exportList === undefined || outline.exportList.includes(topName);
  }
  if (!symbol.exported) return false;
  if (symbol.kind === 'method') return (parent?.exported ?? false) && !symbol.name.startsWith('_');
  return true;
}

/**
 * Statements a set of splices removes from a file: lines holding code (not blank, comment or docstring) that a
 * splice deletes a word of, less the lines its replacement keeps as written (a class stub's kept signatures).
 *
 * @example
 * removedStatementLines(outline, [{ start: body.start, end: body.end, text: 'raise NotImplementedError' }]); // 2
 */
export function removedStatementLines(outline: SourceOutline, splices: readonly Splice[]): number {
  const text = outline.text;
  const lineStartsOfText = startsOf(outline);
  const code = codeLineSet(outline);
  let removed = 0;
  for (const s of splices) {
    if (s.end <= s.start) continue;
    const kept = new Map<string, number>();
    for (const line of s.text.split('\n')) {
      // A TypeScript member stub holds its head and a throwing body on one line: the head is what was kept.
      const t = line.trim().replace(/\s*\{\s*throw new Error\('not implemented'\);?\s*\}$/, ' {').trim();
      if (t !== '') kept.set(t, (kept.get(t) ?? 0) + 1);
    }
    const first = lineOf(lineStartsOfText, s.start);
    const last = lineOf(lineStartsOfText, s.end - 1);
    for (let l = first; l <= last; l++) {
      if (!code.has(l)) continue;
      const lineStart = lineStartsOfText[l - 1]!;
      const lineEnd = lineStartsOfText[l] ?? text.length;
      // A line the splice only grazes (the `{` after a signature, a closing `}`) removes no statement.
      if (!/[\w'"`$]/.test(text.slice(Math.max(lineStart, s.start), Math.min(lineEnd, s.end)))) continue;
      const whole = text.slice(lineStart, lineEnd).trim();
      const left = kept.get(whole) ?? 0;
      if (left > 0) kept.set(whole, left - 1);
      else removed++;
    }
  }
  return removed;
}

/** Every line of the file that holds code (what deleting the whole file removes). */
export function fileStatementLines(outline: SourceOutline | undefined, text: string): number {
  if (outline) return codeLineSet(outline).size;
  return text.split('\n').filter((l) => l.trim() !== '').length;
}

/** The deleted character ranges of splices in the original text (pure insertions delete nothing). */
export function deletedSpans(path: string, splices: readonly Splice[]): CandidateProfile['spans'] {
  return splices
    .filter((s) => s.end > s.start)
    .map((s) => ({ path, start: s.start, end: s.end }))
    .sort((a, b) => a.start - b.start);
}

/**
 * The profile of a symbol-level candidate (function body, class stub, function group): named after `entry`.
 *
 * @example
 * const profile = symbolProfile(outline, entry, splices); // { entryPoint: 'src/url.ts#withHttp', isPublic: true, removedLines: 1, spans: [...] }
 */
export function symbolProfile(outline: SourceOutline, entry: OutlineSymbol, splices: readonly Splice[]): CandidateProfile {
  return {
    entryPoint: `${outline.path}#${entry.qualifiedName}`,
    isPublic: isPublicSymbol(outline, entry),
    removedLines: removedStatementLines(outline, splices),
    spans: deletedSpans(outline.path, splices),
  };
}

const squashName = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * What a user calls of a file: its only public top-level symbol, else the public one named like the file
 * (`url.ts` → `url`, `parse_url.py` → `ParseUrl`), else none (the file itself is the entry point).
 */
export function mainExport(outline: SourceOutline | undefined): OutlineSymbol | undefined {
  if (!outline) return undefined;
  const publicTop = outline.symbols.filter((s) => s.kind !== 'method' && isPublicSymbol(outline, s));
  if (publicTop.length === 1) return publicTop[0];
  const base = outline.path.slice(outline.path.lastIndexOf('/') + 1);
  const stem = squashName(base.includes('.') ? base.slice(0, base.indexOf('.')) : base);
  return publicTop.find((s) => squashName(s.name) === stem);
}

/**
 * The profile of a whole-file deletion: its main export (or the file) as entry point, every code line of the file,
 * the file's whole text and the import statements taken out of its importers as spans.
 *
 * @example
 * fileProfile(index.outlines.get('src/url.ts'), 'src/url.ts', text, importerSpans);
 */
export function fileProfile(outline: SourceOutline | undefined, path: string, text: string, importerSpans: CandidateProfile['spans']): CandidateProfile {
  const main = mainExport(outline);
  const hasPublic = outline === undefined || outline.error !== undefined || outline.symbols.some((s) => s.kind !== 'method' && isPublicSymbol(outline, s));
  return {
    entryPoint: main ? `${path}#${main.qualifiedName}` : path,
    isPublic: outline?.language === 'python' ? hasPublic && !isPrivateModule(path) : hasPublic,
    removedLines: fileStatementLines(outline, text),
    spans: [{ path, start: 0, end: text.length }, ...importerSpans],
  };
}
