/**
 * Resolves an import to the repository file it loads, the way Node/TypeScript (relative specifiers, `.js` written for
 * `.ts`, `index` files) and Python (packages, `__init__.py`, relative levels, a `src/` layout) do. Bare package
 * specifiers resolve to nothing: they are dependencies, not the repository's code.
 */
import { posix } from 'node:path';
import type { OutlineImport } from './source-outline.ts';

const TS_EXTS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
const JS_TO_TS: Record<string, string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] };

/** A resolved import: the file it loads and, for `from pkg import a, b`, which names are submodules in that file. */
export interface ResolvedImport {
  target: string;
  /** Python `from` imports: the imported names this target provides (a submodule name, or all names when the target is the module itself). */
  names?: string[];
  /** Python `from pkg import sub`: the target is the submodule `sub`, not `pkg` itself. */
  submodule?: boolean;
}

function resolveScript(specifier: string, importer: string, files: ReadonlySet<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = posix.normalize(posix.join(posix.dirname(importer), specifier));
  const tries = [base];
  const ext = posix.extname(base);
  for (const alt of JS_TO_TS[ext] ?? []) tries.push(base.slice(0, -ext.length) + alt);
  for (const e of TS_EXTS) tries.push(base + e);
  for (const e of TS_EXTS) tries.push(`${base}/index${e}`);
  return tries.find((t) => files.has(t));
}

const rootsCache = new WeakMap<ReadonlySet<string>, string[]>();

/** Python source roots: the repository root and a `src/` layout. */
function pythonRoots(files: ReadonlySet<string>): string[] {
  let roots = rootsCache.get(files);
  if (!roots) {
    roots = [...files].some((f) => f.startsWith('src/') && f.endsWith('.py')) ? ['', 'src/'] : [''];
    rootsCache.set(files, roots);
  }
  return roots;
}

function pythonModuleFile(dotted: string, root: string, files: ReadonlySet<string>): string | undefined {
  const path = root + dotted.split('.').join('/');
  if (files.has(`${path}.py`)) return `${path}.py`;
  if (files.has(`${path}/__init__.py`)) return `${path}/__init__.py`;
  return undefined;
}

function resolvePython(imp: OutlineImport, importer: string, files: ReadonlySet<string>): ResolvedImport[] {
  const level = /^\.*/.exec(imp.specifier)![0].length;
  const module = imp.specifier.slice(level);
  const roots: string[] = [];
  if (level > 0) {
    let dir = posix.dirname(importer);
    for (let i = 1; i < level; i++) dir = posix.dirname(dir);
    roots.push(dir === '.' ? '' : `${dir}/`);
  } else roots.push(...pythonRoots(files));
  const out: ResolvedImport[] = [];
  for (const root of roots) {
    if (imp.kind === 'python-import') {
      // `import a.b.c` loads a, a.b and a.b.c; the deepest is what the statement is about.
      const file = pythonModuleFile(module, root, files);
      if (file) out.push({ target: file });
      continue;
    }
    const names = imp.names ?? [];
    const moduleFile = module ? pythonModuleFile(module, root, files) : undefined;
    const prefix = module ? `${module}.` : '';
    const submodules: ResolvedImport[] = [];
    for (const n of names) {
      if (n.name === '*') continue;
      const sub = pythonModuleFile(prefix + n.name, root, files);
      if (sub) submodules.push({ target: sub, names: [n.name], submodule: true });
    }
    if (moduleFile) {
      const taken = new Set(submodules.flatMap((s) => s.names ?? []));
      out.push({ target: moduleFile, names: names.map((n) => n.name).filter((n) => !taken.has(n)) });
    }
    out.push(...submodules);
    if (out.length > 0) break;
  }
  return out;
}

/**
 * The repository files an import loads (`files`: every repository-relative path).
 *
 * @example
 * resolveImport({ kind: 'import', specifier: './calc.js' }, 'src/main.ts', files); // [{ target: 'src/calc.ts' }]
 */
export function resolveImport(imp: OutlineImport, importer: string, files: ReadonlySet<string>): ResolvedImport[] {
  if (imp.kind === 'python-import' || imp.kind === 'python-from') return resolvePython(imp, importer, files);
  const target = resolveScript(imp.specifier, importer, files);
  return target ? [{ target }] : [];
}
