/**
 * A parsed repository: every source file's outline and the import graph between them (who imports whom), built once
 * and shared by candidate finding, file removal (which importers to edit) and the tests' import closure.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { CandidateLanguage } from '../candidate.ts';
import { parsePython } from './parse-python.ts';
import { parseTypeScript } from './parse-typescript.ts';
import { resolveImport, type ResolvedImport } from './resolve-import.ts';
import type { SourceOutline } from './source-outline.ts';
import { languageOf, listRepoFiles } from './source-files.ts';

export interface RepoIndex {
  repoDir: string;
  /** Every repository-relative file (sources, tests, data). */
  files: string[];
  /** Source files by language (`any` for file-level-only languages). */
  languages: Map<string, CandidateLanguage>;
  /** Outlines of the TypeScript, JavaScript and Python files. */
  outlines: Map<string, SourceOutline>;
  /** Per importer, the imports and what each resolves to. */
  imports: Map<string, Array<{ index: number; resolved: ResolvedImport[] }>>;
  /** Per file, the files importing it. */
  importers: Map<string, Set<string>>;
  /** Text of the source files. */
  texts: Map<string, string>;
}

/** Files larger than this are not parsed (minified bundles, data in code). */
const MAX_SOURCE_BYTES = 512 * 1024;

/**
 * Lists, reads and parses a repository's source files.
 *
 * @example
 * const index = await indexRepository('/src/calc');
 * index.importers.get('src/calc.ts'); // Set { 'src/main.ts', 'test/calc.test.ts' }
 */
export async function indexRepository(repoDir: string): Promise<RepoIndex> {
  const root = resolve(repoDir);
  const files = await listRepoFiles(root);
  const languages = new Map<string, CandidateLanguage>();
  const texts = new Map<string, string>();
  for (const f of files) {
    const lang = languageOf(f);
    if (!lang) continue;
    const buf = await readFile(join(root, f)).catch(() => undefined);
    if (!buf || buf.length > MAX_SOURCE_BYTES || buf.includes(0)) continue;
    languages.set(f, lang);
    texts.set(f, buf.toString('utf8'));
  }
  const outlines = new Map<string, SourceOutline>();
  const pyFiles: Array<{ path: string; absPath: string; text: string }> = [];
  for (const [f, lang] of languages) {
    const text = texts.get(f)!;
    if (lang === 'typescript' || lang === 'javascript') outlines.set(f, parseTypeScript(f, text));
    else if (lang === 'python') pyFiles.push({ path: f, absPath: join(root, f), text });
  }
  try {
    for (const o of await parsePython(pyFiles)) outlines.set(o.path, o);
  } catch (e) {
    // No usable python3: Python files stay removable at the file level.
    for (const f of pyFiles) outlines.set(f.path, { path: f.path, language: 'python', text: f.text, symbols: [], imports: [], error: (e as Error).message });
  }
  const fileSet = new Set(files);
  const imports = new Map<string, Array<{ index: number; resolved: ResolvedImport[] }>>();
  const importers = new Map<string, Set<string>>();
  for (const [f, outline] of outlines) {
    const list = outline.imports.map((imp, index) => ({ index, resolved: resolveImport(imp, f, fileSet) }));
    imports.set(f, list);
    for (const { resolved } of list)
      for (const r of resolved) {
        if (r.target === f) continue;
        let set = importers.get(r.target);
        if (!set) importers.set(r.target, (set = new Set()));
        set.add(f);
      }
  }
  return { repoDir: root, files, languages, outlines, imports, importers, texts };
}

/** Files a file loads, transitively (itself included). Python packages' `__init__.py` on the way count too. */
export function importClosure(index: RepoIndex, start: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...start];
  while (queue.length > 0) {
    const f = queue.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const { resolved } of index.imports.get(f) ?? []) for (const r of resolved) if (!seen.has(r.target)) queue.push(r.target);
    // Importing pkg.sub runs pkg/__init__.py.
    if (f.endsWith('.py')) {
      const parts = f.split('/');
      for (let i = parts.length - 1; i > 0; i--) {
        const init = `${parts.slice(0, i).join('/')}/__init__.py`;
        if (init !== f && index.languages.has(init) && !seen.has(init)) queue.push(init);
      }
    }
  }
  return seen;
}
