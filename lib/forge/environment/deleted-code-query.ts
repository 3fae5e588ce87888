/**
 * The deleted code as the environment index is asked about it: its fingerprints read as Python and as script (the two
 * differ only in what counts as a comment), and — because a published TypeScript library ships JavaScript — as the
 * TypeScript compiler's transpiled output (types, `as` casts and modifiers gone), plus its probe lines.
 */
import ts from 'typescript';
import { codeFingerprints, probeLineHashes } from './code-fingerprints.ts';
import type { CodeQuery } from './code-index.ts';

function sameHashes(a: Uint32Array, b: Uint32Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The code with TypeScript's syntax taken out, or undefined when the compiler gives nothing different. */
function transpiled(code: string): string | undefined {
  try {
    const out = ts.transpileModule(code, { compilerOptions: { target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext, removeComments: true }, reportDiagnostics: false }).outputText;
    return out.trim() && out !== code ? out : undefined;
  } catch {
    return undefined;
  }
}

/**
 * @example
 * const query = deletedCodeQuery('  const total: number = items.reduce((s, i) => s + i.price, 0);\n  return total;\n');
 * query.variants.length // 3: as Python, as script, transpiled
 */
export function deletedCodeQuery(removedCode: string): CodeQuery {
  const variants: Uint32Array[] = [];
  const add = (fp: Uint32Array) => {
    if (fp.length > 0 && !variants.some((v) => sameHashes(v, fp))) variants.push(fp);
  };
  add(codeFingerprints(removedCode, 'python'));
  add(codeFingerprints(removedCode, 'script'));
  // Python code gives TypeScript's transpiler nothing it would strip; it is only tried on code that is not Python.
  if (!/^\s*(?:def|class|elif|except|with)\b.*:\s*$/m.test(removedCode)) {
    const js = transpiled(removedCode);
    if (js) add(codeFingerprints(js, 'script'));
  }
  return { variants, lines: probeLineHashes(removedCode) };
}
