/**
 * Python outlines through Python's own `ast` module, run as a child process (`python-ast.py`, shipped beside this
 * file). Chosen over tree-sitter because it needs no native or wasm grammar download, is exactly the grammar of the
 * interpreter that runs the repository's tests, and every Python repository the forge can certify has `python3`.
 * One process parses a whole batch of files.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { indentAt, toLineEnd, toLineStart, type OutlineImport, type OutlineMember, type OutlineSymbol, type SourceOutline, type Span } from './source-outline.ts';

/** The not-implemented statement a removed Python body gets. */
export const PY_NOT_IMPLEMENTED = 'raise NotImplementedError';

const SCRIPT = fileURLToPath(new URL('./python-ast.py', import.meta.url));

type Pos = [number, number];

interface PyFunction {
  kind: 'function';
  name: string;
  async: boolean;
  start: Pos;
  defStart: Pos;
  end: Pos;
  decorators: string[];
  doc: string | null;
  docStart: Pos | null;
  docEnd: Pos | null;
  bodyStart: Pos;
  restStart: Pos | null;
  references: string[];
}
interface PyClass {
  kind: 'class';
  name: string;
  start: Pos;
  defStart: Pos;
  end: Pos;
  doc: string | null;
  docStart: Pos | null;
  docEnd: Pos | null;
  bodyStart: Pos;
  members: Array<PyFunction | { kind: 'annotation' | 'assign' | 'other'; start: Pos; end: Pos }>;
  references: string[];
}
interface PyImport {
  kind: 'import' | 'from';
  module: string | null;
  level: number;
  names: Array<{ name: string; asname: string | null }>;
  start: Pos;
  end: Pos;
  topLevel: boolean;
}
type PyOutline = { symbols: Array<PyFunction | PyClass>; imports: PyImport[]; all?: string[] | null; codeLines?: number[] } | { error: string };

/** Converts `ast` positions (1-based line, UTF-8 byte column) into string offsets. */
class Offsets {
  private readonly lineStarts: number[] = [0];
  private readonly text: string;
  constructor(text: string) {
    this.text = text;
    for (let i = 0; i < text.length; i++) if (text[i] === '\n') this.lineStarts.push(i + 1);
  }
  at([line, byteCol]: Pos): number {
    const start = this.lineStarts[line - 1] ?? this.text.length;
    const lineEnd = this.lineStarts[line] ?? this.text.length;
    const lineText = this.text.slice(start, lineEnd);
    return start + Buffer.from(lineText, 'utf8').subarray(0, byteCol).toString('utf8').length;
  }
}

/** `ast` places a decorator at its expression: step back over `@` (and any space after it). */
function decoratorStart(text: string, offset: number): number {
  let i = offset;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  return i > 0 && text[i - 1] === '@' ? i - 1 : offset;
}

function runScript(paths: string[], python: string): Promise<Record<string, PyOutline>> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [SCRIPT], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => reject(new Error(`cannot run ${python} to parse Python: ${e.message}`)));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`python-ast.py failed (${code}): ${Buffer.concat(err).toString('utf8').trim()}`));
      try {
        resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as Record<string, PyOutline>);
      } catch (e) {
        reject(new Error(`python-ast.py wrote no JSON: ${(e as Error).message}`));
      }
    });
    child.stdin.end(JSON.stringify(paths));
  });
}

function isPrivateName(name: string): boolean {
  return name.startsWith('_') && !(name.startsWith('__') && name.endsWith('__'));
}

function functionSymbol(f: PyFunction, text: string, o: Offsets, parent?: string): OutlineSymbol {
  const start = toLineStart(text, decoratorStart(text, o.at(f.start)));
  const defStart = o.at(f.defStart);
  const headEnd = f.docStart ? o.at(f.docStart) : o.at(f.bodyStart);
  const end = toLineEnd(text, o.at(f.end));
  const restStart = f.restStart ? o.at(f.restStart) : undefined;
  const body: OutlineSymbol['body'] = restStart !== undefined ? { start: restStart, end: o.at(f.end), shape: 'python-suite' } : undefined;
  const decorators = f.decorators.map((d) => `@${d}\n`).join('');
  return {
    kind: parent ? 'method' : 'function',
    name: f.name,
    qualifiedName: parent ? `${parent}.${f.name}` : f.name,
    span: { start, end },
    signature: (decorators + text.slice(defStart, headEnd)).trim(),
    ...(f.doc !== null ? { doc: f.doc } : {}),
    ...(body ? { body } : {}),
    exported: !isPrivateName(f.name),
    async: f.async,
    references: f.references,
    ...(parent ? { parent } : {}),
    indent: indentAt(text, defStart),
  };
}

/** A Python member as a class stub keeps it. */
function pythonMemberStub(m: PyClass['members'][number], text: string, o: Offsets): OutlineMember {
  const span: Span = { start: m.kind === 'function' ? decoratorStart(text, o.at(m.start)) : o.at(m.start), end: o.at(m.end) };
  if (m.kind !== 'function') {
    // Annotated fields (dataclass fields, declared attributes) are the class's interface; other statements are implementation.
    return { kind: m.kind === 'annotation' ? 'property' : 'other', span, private: false, ...(m.kind === 'annotation' ? { stub: text.slice(span.start, span.end) } : {}) };
  }
  const indent = indentAt(text, o.at(m.defStart));
  const head = text.slice(decoratorStart(text, o.at(m.start)), m.docEnd ? o.at(m.docEnd) : o.at(m.bodyStart)).trimEnd();
  const sameLine = !m.docEnd && !text.slice(o.at(m.defStart), o.at(m.bodyStart)).includes('\n');
  const stub = sameLine ? `${head} ${PY_NOT_IMPLEMENTED}` : `${head}\n${indent}    ${PY_NOT_IMPLEMENTED}`;
  return { kind: m.name === '__init__' ? 'constructor' : 'method', name: m.name, span, private: isPrivateName(m.name), stub };
}

function importOf(i: PyImport, text: string, o: Offsets): OutlineImport[] {
  const statement = i.topLevel ? { start: toLineStart(text, o.at(i.start)), end: toLineEnd(text, o.at(i.end)) } : undefined;
  if (i.kind === 'import') return i.names.map((n) => ({ kind: 'python-import' as const, specifier: n.name, names: [{ name: n.name, ...(n.asname ? { alias: n.asname } : {}) }], ...(statement ? { statement } : {}) }));
  return [
    {
      kind: 'python-from',
      specifier: '.'.repeat(i.level) + (i.module ?? ''),
      names: i.names.map((n) => ({ name: n.name, ...(n.asname ? { alias: n.asname } : {}) })),
      ...(statement ? { statement } : {}),
    },
  ];
}

/**
 * Parses Python files (absolute path → text) with one `python3` process; a file that does not parse gets `error`.
 *
 * @example
 * const [outline] = await parsePython([{ path: 'calc.py', absPath: '/src/calc.py', text }]);
 */
export async function parsePython(files: Array<{ path: string; absPath: string; text: string }>, python = process.env.FLYWHEEL_PYTHON ?? 'python3'): Promise<SourceOutline[]> {
  if (files.length === 0) return [];
  const raw = await runScript(
    files.map((f) => f.absPath),
    python,
  );
  return files.map(({ path, absPath, text }) => {
    const r = raw[absPath];
    if (!r || 'error' in r) return { path, language: 'python' as const, text, symbols: [], imports: [], error: r ? r.error : 'not parsed' };
    const o = new Offsets(text);
    const symbols: OutlineSymbol[] = [];
    for (const s of r.symbols) {
      if (s.kind === 'function') {
        symbols.push(functionSymbol(s, text, o));
        continue;
      }
      const members = s.members.map((m) => pythonMemberStub(m, text, o));
      symbols.push({
        kind: 'class',
        name: s.name,
        qualifiedName: s.name,
        span: { start: toLineStart(text, decoratorStart(text, o.at(s.start))), end: toLineEnd(text, o.at(s.end)) },
        signature: text.slice(decoratorStart(text, o.at(s.start)), s.docStart ? o.at(s.docStart) : o.at(s.bodyStart)).trim(),
        ...(s.doc !== null ? { doc: s.doc } : {}),
        exported: !isPrivateName(s.name),
        references: s.references,
        members,
        indent: indentAt(text, o.at(s.defStart)),
        // The class suite after its docstring: what a class stub replaces.
        body: { start: s.docEnd ? o.at(s.docEnd) : o.at(s.bodyStart), end: o.at(s.end), shape: 'python-suite' as const },
      });
      for (const m of s.members) if (m.kind === 'function') symbols.push(functionSymbol(m, text, o, s.name));
    }
    return {
      path,
      language: 'python' as const,
      text,
      symbols,
      imports: r.imports.flatMap((i) => importOf(i, text, o)),
      ...(r.all ? { exportList: r.all } : {}),
      ...(r.codeLines ? { codeLines: r.codeLines } : {}),
    };
  });
}
