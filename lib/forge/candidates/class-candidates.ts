/**
 * Strategy `class`: a class loses its implementation — fields' initializers, private members, every body — and is
 * left as a stub: its declaration (name, heritage, decorators, doc), its constructor and public methods with a
 * "not implemented" body, its typed fields without initializers (TypeScript) / its annotated fields as written (Python: dataclass fields are the interface). The stub, rather than
 * removing the class, keeps every importer linking (an ES module importing a missing export fails to load, which
 * would crash the whole suite instead of failing the tests of the class) and keeps TypeScript callers type-checking.
 */
import type { Candidate, CandidateLanguage } from '../candidate.ts';
import { indentAt, type OutlineSymbol, type SourceOutline } from '../parse/source-outline.ts';
import type { ReturnTypeLookup } from './infer-return-types.ts';
import { symbolProfile } from './candidate-profile.ts';
import { applySplices, makeCandidate, type Splice } from './make-candidate.ts';
import { symbolContext } from './symbol-context.ts';

function reindent(stub: string, indent: string): string {
  return indent + stub;
}

function tsStub(outline: SourceOutline, cls: OutlineSymbol, returnTypes?: ReturnTypeLookup): Splice | undefined {
  if (!cls.body) return undefined;
  const inner = `${cls.indent}  `;
  const lines: string[] = [];
  for (const m of cls.members ?? []) {
    if (!m.stub) continue;
    if (m.private && m.kind !== 'constructor') continue;
    let stub = m.stub;
    let typed = false;
    if (m.returnTypeAt !== undefined && m.returnTypeSlot !== undefined && returnTypes && outline.language === 'typescript') {
      const type = returnTypes(outline.path, m.returnTypeSlot);
      if (type) {
        stub = `${stub.slice(0, m.returnTypeAt)}: ${type}${stub.slice(m.returnTypeAt)}`;
        typed = true;
      }
    }
    // A field whose type could not be inferred (or JavaScript, with no types) is dropped rather than left invalid.
    if (m.needsType && !typed) {
      if (outline.language === 'typescript') continue;
      stub = stub.replace(/!;$/, ';');
    }
    // TypeScript wants super() in a derived constructor; the stub throws first, which is what it should do.
    if (m.kind === 'constructor' && cls.derived && outline.language === 'typescript') lines.push(`${inner}// @ts-expect-error the stub throws before calling super()`);
    lines.push(reindent(stub, inner));
  }
  const body = lines.length > 0 ? `{\n${lines.join('\n')}\n${cls.indent}}` : '{}';
  return { start: cls.body.start, end: cls.body.end, text: body };
}

function pyStub(outline: SourceOutline, cls: OutlineSymbol): Splice | undefined {
  if (!cls.body) return undefined;
  const text = outline.text;
  const members = cls.members ?? [];
  const firstMember = members[0];
  const memberIndent = firstMember ? indentAt(text, firstMember.span.start) : `${cls.indent}    `;
  // A suite on the class's own line (`class A: pass`) has no indentation to build on.
  if (firstMember && !text.slice(0, firstMember.span.start).endsWith(memberIndent)) return undefined;
  const kept = members.filter((m) => m.stub && !m.private).map((m) => reindent(m.stub!, memberIndent));
  const hasDoc = cls.doc !== undefined;
  if (kept.length === 0 && !hasDoc) kept.push(`${memberIndent}pass`);
  const start = hasDoc ? cls.body.start : text.lastIndexOf('\n', cls.body.start - 1) + 1;
  return { start, end: cls.body.end, text: kept.length === 0 ? '' : (hasDoc ? '\n' : '') + kept.join('\n\n') };
}

export function classCandidates(outline: SourceOutline, returnTypes?: ReturnTypeLookup): Candidate[] {
  const out: Candidate[] = [];
  for (const cls of outline.symbols) {
    if (cls.kind !== 'class') continue;
    const splice = outline.language === 'python' ? pyStub(outline, cls) : tsStub(outline, cls, returnTypes);
    if (!splice) continue;
    const methods = outline.symbols.filter((s) => s.parent === cls.qualifiedName);
    out.push(
      makeCandidate({
        strategy: 'class',
        language: outline.language as CandidateLanguage,
        label: `${outline.path}-${cls.qualifiedName}`,
        symbols: [`${outline.path}#${cls.qualifiedName}`, ...methods.map((m) => `${outline.path}#${m.qualifiedName}`)],
        edits: [{ path: outline.path, original: outline.text, content: applySplices(outline.text, [splice]) }],
        context: symbolContextFor(cls, methods),
        profile: symbolProfile(outline, cls, [splice]),
      }),
    );
  }
  return out;
}

/** The class's signature and kept member signatures, and the docs of the class and its methods. */
function symbolContextFor(cls: OutlineSymbol, methods: OutlineSymbol[]): ReturnType<typeof symbolContext> {
  const ctx = symbolContext([cls]);
  for (const m of methods) if (m.doc && !ctx.docComments.includes(m.doc)) ctx.docComments.push(m.doc);
  return ctx;
}
