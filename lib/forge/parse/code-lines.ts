/**
 * Which lines of a source file hold code: not blank, not comment-only, not a docstring. Python outlines carry the
 * answer from the parser (`tokenize` and `ast`, see `python-ast.py`); TypeScript and JavaScript lines are told by the
 * TypeScript scanner (a line is code when a token other than trivia starts or runs on it).
 */
import ts from 'typescript';
import type { SourceOutline } from './source-outline.ts';

const cache = new WeakMap<SourceOutline, Set<number>>();

const TRIVIA = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.WhitespaceTrivia,
  ts.SyntaxKind.NewLineTrivia,
  ts.SyntaxKind.SingleLineCommentTrivia,
  ts.SyntaxKind.MultiLineCommentTrivia,
  ts.SyntaxKind.ShebangTrivia,
  ts.SyntaxKind.ConflictMarkerTrivia,
]);

/** After these a `/` divides; elsewhere it opens a regular expression. */
const ENDS_OPERAND = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/** Offsets where each line starts (index 0 is line 1). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

/** 1-based line of an offset, given the text's `lineStarts`. */
export function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function scriptCodeLines(text: string, jsx: boolean): Set<number> {
  const starts = lineStarts(text);
  const lines = new Set<number>();
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, jsx ? ts.LanguageVariant.JSX : ts.LanguageVariant.Standard, text);
  // Brace depths at which a template's `${` opened: the `}` closing it resumes the template.
  const templates: number[] = [];
  let depth = 0;
  let previous = ts.SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.CloseBraceToken && templates.at(-1) === depth) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === ts.SyntaxKind.TemplateTail) templates.pop();
    } else if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && !ENDS_OPERAND.has(previous)) kind = scanner.reScanSlashToken();
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) depth--;
    else if (kind === ts.SyntaxKind.TemplateHead) templates.push(depth);
    if (TRIVIA.has(kind)) continue;
    previous = kind;
    const first = lineOf(starts, scanner.getTokenStart());
    const last = lineOf(starts, Math.max(scanner.getTokenStart(), scanner.getTokenEnd() - 1));
    for (let l = first; l <= last; l++) lines.add(l);
  }
  return lines;
}

/** Without the parser's answer: every non-blank line that is not a `#` comment. */
function plainCodeLines(text: string): Set<number> {
  const lines = new Set<number>();
  text.split('\n').forEach((line, i) => {
    const t = line.trim();
    if (t !== '' && !t.startsWith('#')) lines.add(i + 1);
  });
  return lines;
}

/**
 * The 1-based numbers of the lines of a file that hold code (computed once per outline).
 *
 * @example
 * const code = codeLineSet(outline);
 * code.has(3); // false when line 3 is blank, a comment or part of a docstring
 */
export function codeLineSet(outline: SourceOutline): Set<number> {
  let lines = cache.get(outline);
  if (lines) return lines;
  if (outline.codeLines) lines = new Set(outline.codeLines);
  else if (outline.language === 'python') lines = plainCodeLines(outline.text);
  else lines = scriptCodeLines(outline.text, /\.[jt]sx$/.test(outline.path));
  cache.set(outline, lines);
  return lines;
}
