/**
 * The splices that replace one function's body by a language-appropriate "not implemented" error, keeping its
 * signature (and, in Python, its docstring): `throw new Error('not implemented')` / `raise NotImplementedError`.
 */
import { PY_NOT_IMPLEMENTED } from '../parse/parse-python.ts';
import { TS_NOT_IMPLEMENTED } from '../parse/parse-typescript.ts';
import { indentAt, toLineStart, type OutlineSymbol, type SourceOutline } from '../parse/source-outline.ts';
import type { Splice } from './make-candidate.ts';
import type { ReturnTypeLookup } from './infer-return-types.ts';

const squash = (s: string): string => s.replace(/\s+/g, '');
const ALREADY_STUB = new Set(['', 'pass', '...', PY_NOT_IMPLEMENTED, `${PY_NOT_IMPLEMENTED}()`, '{}', `{${TS_NOT_IMPLEMENTED}}`].map(squash));

/** True when a body holds nothing worth rebuilding (empty, `pass`, already not-implemented). */
export function isTrivialBody(outline: SourceOutline, symbol: OutlineSymbol): boolean {
  if (!symbol.body) return true;
  return ALREADY_STUB.has(squash(outline.text.slice(symbol.body.start, symbol.body.end)));
}

/** Abstract, overload and protocol declarations have no body to rebuild. */
export function isDeclarationOnly(symbol: OutlineSymbol): boolean {
  return /(^|\n)\s*@(abc\.)?(abstractmethod|overload|typing\.overload)\b/.test(symbol.signature);
}

/** The splices for a body removal (and the inferred return type, for TypeScript without an annotation). */
export function bodyReplacement(outline: SourceOutline, symbol: OutlineSymbol, returnTypes?: ReturnTypeLookup): Splice[] {
  const body = symbol.body;
  if (!body) return [];
  const text = outline.text;
  if (body.shape === 'python-suite') {
    const lineStart = toLineStart(text, body.start);
    if (lineStart !== body.start) return [{ start: lineStart, end: body.end, text: `${indentAt(text, body.start)}${PY_NOT_IMPLEMENTED}` }];
    // `def f(x): return x`: the suite shares the def's line.
    return [{ start: body.start, end: body.end, text: PY_NOT_IMPLEMENTED }];
  }
  const splices: Splice[] = [{ start: body.start, end: body.end, text: `{\n${symbol.indent}  ${TS_NOT_IMPLEMENTED}\n${symbol.indent}}` }];
  if (outline.language === 'typescript' && symbol.returnTypeAt !== undefined && returnTypes) {
    const type = returnTypes(outline.path, symbol.returnTypeAt);
    if (type) splices.push({ start: symbol.returnTypeAt, end: symbol.returnTypeAt, text: `: ${type}` });
  }
  return splices;
}
