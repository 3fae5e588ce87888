/**
 * Strategy `file`: a whole source file is deleted, in any language, and so are the import statements of it in the
 * repository's other source files (TypeScript/JavaScript `import`, `export … from`, top-level `require`; Python
 * `import` / `from … import`, rewritten when only some of its names were the deleted module). Usages of the imported
 * names are left as they are: rebuilding the module and its imports is the task. Test files are never edited —
 * they certify the task; a test importing the deleted module fails to load, which certification accepts for this
 * strategy only. Python `__init__.py` files are not candidates (deleting one mostly turns a package into a
 * namespace package, which breaks nothing a test can see).
 */
import type { Candidate, CandidateFileEdit, CandidateProfile } from '../candidate.ts';
import type { RepoIndex } from '../parse/index-repository.ts';
import type { OutlineImport } from '../parse/source-outline.ts';
import { isTestPath } from '../parse/source-files.ts';
import { deletedSpans, fileProfile } from './candidate-profile.ts';
import { applySplices, makeCandidate, type Splice } from './make-candidate.ts';
import { symbolContext } from './symbol-context.ts';

function pythonImportText(imp: OutlineImport, keep: NonNullable<OutlineImport['names']>): string {
  const names = keep.map((n) => (n.alias ? `${n.name} as ${n.alias}` : n.name)).join(', ');
  return imp.kind === 'python-from' ? `from ${imp.specifier} import ${names}` : `import ${names}`;
}

/** The splices that take the imports of `removed` out of `importer`. */
export function importRemovals(index: RepoIndex, importer: string, removed: string): Splice[] {
  const outline = index.outlines.get(importer);
  if (!outline) return [];
  const resolved = index.imports.get(importer) ?? [];
  // Python `import a, b` gives one OutlineImport per name sharing one statement: decide per statement.
  const byStatement = new Map<string, { imp: OutlineImport; statement: NonNullable<OutlineImport['statement']>; keep: NonNullable<OutlineImport['names']>; dropped: boolean }>();
  for (const { index: i, resolved: targets } of resolved) {
    const imp = outline.imports[i]!;
    if (!imp.statement) continue;
    const key = `${imp.statement.start}:${imp.statement.end}`;
    let entry = byStatement.get(key);
    if (!entry) byStatement.set(key, (entry = { imp, statement: imp.statement, keep: [], dropped: false }));
    const hits = targets.filter((t) => t.target === removed);
    if (imp.kind === 'python-from' && hits.length > 0) {
      // `from pkg.removed import x` loses everything; `from pkg import removed, other` keeps `other`.
      const moduleItself = hits.some((h) => !h.submodule);
      const droppedNames = new Set(hits.flatMap((h) => h.names ?? []));
      if (!moduleItself) entry.keep.push(...(imp.names ?? []).filter((n) => !droppedNames.has(n.name)));
      entry.dropped = true;
    } else if (hits.length > 0) entry.dropped = true;
    else entry.keep.push(...(imp.names ?? []));
  }
  const splices: Splice[] = [];
  for (const { imp, statement, keep, dropped } of byStatement.values()) {
    if (!dropped) continue;
    const isPython = imp.kind === 'python-import' || imp.kind === 'python-from';
    if (isPython && keep.length > 0) {
      const original = outline.text.slice(statement.start, statement.end);
      const lead = /^\s*/.exec(original)![0];
      const trail = original.endsWith('\n') ? '\n' : '';
      splices.push({ start: statement.start, end: statement.end, text: `${lead}${pythonImportText(imp, keep)}${trail}` });
    } else splices.push({ start: statement.start, end: statement.end, text: '' });
  }
  return splices;
}

export function fileCandidates(index: RepoIndex, path: string): Candidate[] {
  const language = index.languages.get(path);
  const text = index.texts.get(path);
  if (!language || text === undefined || path.endsWith('__init__.py')) return [];
  const edits: CandidateFileEdit[] = [{ path, original: text, content: null }];
  const importerSpans: CandidateProfile['spans'] = [];
  for (const importer of [...(index.importers.get(path) ?? [])].sort()) {
    if (isTestPath(importer) || importer === path) continue;
    const splices = importRemovals(index, importer, path);
    if (splices.length === 0) continue;
    const original = index.texts.get(importer)!;
    edits.push({ path: importer, original, content: applySplices(original, splices) });
    importerSpans.push(...deletedSpans(importer, splices));
  }
  const outline = index.outlines.get(path);
  const exported = (outline?.symbols ?? []).filter((s) => s.exported && s.kind !== 'method');
  return [makeCandidate({ strategy: 'file', language, label: path, symbols: [path], edits, context: symbolContext(exported), profile: fileProfile(outline, path, text, importerSpans) })];
}
