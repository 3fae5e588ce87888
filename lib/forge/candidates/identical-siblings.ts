/**
 * Functions whose bodies are the same but for whitespace, comments, their own names (the function's name and its
 * parameters) and at most one short literal: `withHttps` beside `withHttp`. Deleting one leaves the answer beside
 * it, so a candidate names its sibling (`CandidateProfile.identicalSibling`) and the ranking refuses it. Bodies that
 * differ in a long literal (two SQL statements, two templates) are different code, not twins.
 */
import ts from 'typescript';
import type { RepoIndex } from '../parse/index-repository.ts';
import type { OutlineSymbol, SourceOutline } from '../parse/source-outline.ts';
import { isDeclarationOnly, isTrivialBody } from './replace-body.ts';

type Token = { kind: 'name' | 'string' | 'number' | 'other'; text: string; value?: string };

/** Python tokens by one sticky regular expression: strings (any prefix, triple quotes), comments, numbers, names. */
const PY_TOKEN = /([rRbBuUfF]{0,2}(?:'''[\s\S]*?'''|"""[\s\S]*?"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))|(#[^\n]*)|(\d[\w.]*)|([A-Za-z_]\w*)|(\s+)|([\s\S])/gy;

function pythonTokens(text: string): Token[] {
  const out: Token[] = [];
  PY_TOKEN.lastIndex = 0;
  for (let m = PY_TOKEN.exec(text); m; m = PY_TOKEN.exec(text)) {
    if (m[1] !== undefined) out.push({ kind: 'string', text: m[1], value: m[1].replace(/^[rRbBuUfF]*('{3}|"{3}|'|")([\s\S]*)\1$/, '$2') });
    else if (m[3] !== undefined) out.push({ kind: 'number', text: m[3] });
    else if (m[4] !== undefined) out.push({ kind: 'name', text: m[4] });
    else if (m[6] !== undefined) out.push({ kind: 'other', text: m[6] });
    if (PY_TOKEN.lastIndex >= text.length) break;
  }
  return out;
}

const TS_STRINGS = new Set<ts.SyntaxKind>([ts.SyntaxKind.StringLiteral, ts.SyntaxKind.NoSubstitutionTemplateLiteral, ts.SyntaxKind.TemplateHead, ts.SyntaxKind.TemplateMiddle, ts.SyntaxKind.TemplateTail, ts.SyntaxKind.RegularExpressionLiteral]);

function scriptTokens(text: string): Token[] {
  const out: Token[] = [];
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  const templates: number[] = [];
  let depth = 0;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.CloseBraceToken && templates.at(-1) === depth) {
      kind = scanner.reScanTemplateToken(false);
      if (kind === ts.SyntaxKind.TemplateTail) templates.pop();
    }
    if (kind === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (kind === ts.SyntaxKind.CloseBraceToken) depth--;
    else if (kind === ts.SyntaxKind.TemplateHead) templates.push(depth);
    const tokenText = scanner.getTokenText();
    if (TS_STRINGS.has(kind)) out.push({ kind: 'string', text: tokenText, value: scanner.getTokenValue() });
    else if (kind === ts.SyntaxKind.NumericLiteral || kind === ts.SyntaxKind.BigIntLiteral) out.push({ kind: 'number', text: tokenText });
    else if (kind === ts.SyntaxKind.Identifier) out.push({ kind: 'name', text: tokenText });
    else out.push({ kind: 'other', text: tokenText });
  }
  return out;
}

function tokensOf(outline: SourceOutline, text: string): Token[] {
  return outline.language === 'python' ? pythonTokens(text) : scriptTokens(text);
}

/** Parameter names from a signature: the names at the top level of the first parameter list after the symbol's name. */
export function parameterNames(outline: SourceOutline, symbol: OutlineSymbol): string[] {
  const tokens = tokensOf(outline, symbol.signature);
  let i = tokens.findIndex((t) => t.kind === 'name' && t.text === symbol.name);
  while (i >= 0 && i < tokens.length && tokens[i]!.text !== '(') i++;
  if (i < 0 || i >= tokens.length) return [];
  const names: string[] = [];
  let depth = 0;
  for (let j = i; j < tokens.length; j++) {
    const t = tokens[j]!;
    if ('([{'.includes(t.text)) depth++;
    else if (')]}'.includes(t.text)) {
      depth--;
      if (depth === 0) break;
    } else if (depth === 1 && t.kind === 'name') {
      const before = tokens[j - 1]?.text ?? '';
      const after = tokens[j + 1]?.text ?? '';
      if (['(', ',', '*', '...', '.'].includes(before) && [':', ',', ')', '=', '?'].includes(after)) names.push(t.text);
    }
  }
  return names;
}

/** Literals longer than this are content, not a detail: two bodies differing in one are different code, not twins. */
export const MAX_SIBLING_LITERAL = 32;

/** A body as siblings compare it. */
export interface BodyShape {
  /** Tokens with whitespace and comments gone, literals as placeholders, own name and parameters by position. */
  shape: string;
  /** The literals' values, in order. */
  literals: string[];
}

/**
 * A body's shape and literals; undefined for a body with nothing to rebuild.
 *
 * @example
 * bodyShape(outline, withHttps)!.shape === bodyShape(outline, withHttp)!.shape; // true: `return withProtocol(input, "…")`
 */
export function bodyShape(outline: SourceOutline, symbol: OutlineSymbol): BodyShape | undefined {
  if (!symbol.body || isTrivialBody(outline, symbol) || isDeclarationOnly(symbol)) return undefined;
  const own = new Map(parameterNames(outline, symbol).map((n, i) => [n, `$${i}`]));
  own.set(symbol.name, '$self');
  const tokens = tokensOf(outline, outline.text.slice(symbol.body.start, symbol.body.end));
  return {
    shape: tokens.map((t) => (t.kind === 'string' ? '"s"' : t.kind === 'number' ? '0' : t.kind === 'name' ? (own.get(t.text) ?? t.text) : t.text)).join(' '),
    literals: tokens.filter((t) => t.kind === 'string' || t.kind === 'number').map((t) => t.value ?? t.text),
  };
}

/** Same shape already; twins when the literals differ in at most one place, where both are short. */
function twins(a: readonly string[], b: readonly string[]): boolean {
  const differ = a.flatMap((x, i) => (x === b[i] ? [] : [[x, b[i] ?? '']]));
  return differ.length === 0 || (differ.length === 1 && differ[0]!.every((x) => x.length <= MAX_SIBLING_LITERAL));
}

/** Per body shape, the functions and methods holding it (`path#qualifiedName`) with their literals, in path and position order. */
export type SiblingIndex = Map<string, Array<{ name: string; literals: string[] }>>;

/**
 * Every function and method body of the repository by shape (computed once per index).
 *
 * @example
 * const siblings = siblingIndex(index);
 * identicalSibling(siblings, outline, symbol); // 'src/url.ts#withHttp'
 */
export function siblingIndex(index: RepoIndex): SiblingIndex {
  const byShape: SiblingIndex = new Map();
  for (const path of [...index.outlines.keys()].sort()) {
    const outline = index.outlines.get(path)!;
    for (const s of outline.symbols) {
      if (s.kind === 'class') continue;
      const body = bodyShape(outline, s);
      if (body === undefined) continue;
      const list = byShape.get(body.shape) ?? [];
      list.push({ name: `${path}#${s.qualifiedName}`, literals: body.literals });
      byShape.set(body.shape, list);
    }
  }
  return byShape;
}

/** Another function whose body is `symbol`'s twin: one in the same file first, else the first in path order. */
export function identicalSibling(siblings: SiblingIndex, outline: SourceOutline, symbol: OutlineSymbol): string | undefined {
  const body = bodyShape(outline, symbol);
  if (body === undefined) return undefined;
  const self = `${outline.path}#${symbol.qualifiedName}`;
  const others = (siblings.get(body.shape) ?? []).filter((o) => o.name !== self && twins(body.literals, o.literals)).map((o) => o.name);
  return others.find((q) => q.startsWith(`${outline.path}#`)) ?? others[0];
}
