/**
 * No leftovers: a forged task's starting tree must carry nothing from which the deleted code can be recovered.
 * Two kinds of derived artefact are stripped:
 *
 * 1. Derived by nature, removed wherever they are, tracked or not: `__pycache__/` and `*.pyc`/`*.pyo`, mypy /
 *    pytest / ruff / pyright / pytype caches, `*.tsbuildinfo`, source maps (`*.map` holding `"mappings"`),
 *    coverage data (`coverage/` output, `.nyc_output/`, `.coverage*`, `htmlcov/`, `lcov.info`, `coverage.xml`),
 *    compiled classes (`*.class`), `.eslintcache`, `node_modules/.cache`, `.vite`, `.turbo`, `.parcel-cache`,
 *    `.next`, `.nuxt`, `.svelte-kit`.
 * 2. Build output folders — `dist/`, `build/`, `out/`, and the tsconfig's `outDir` / `declarationDir` — which may
 *    also be tracked source (a `build/` of scripts). Decision: in a git work tree, their untracked or ignored files
 *    are removed whole; their tracked files (and every file when the tree is not a git work tree, e.g. a checkout
 *    the forge made from a commit) are removed only when they carry evidence of the removed code — one of its
 *    non-trivial lines, or a removed symbol's name as a word. So output that could leak goes, and source that cannot
 *    stays; a tracked source file removed this way at worst breaks the suite, which certification then rejects.
 *
 * Virtual environments and `node_modules` (other than its `.cache`) are third-party code and are not walked.
 */
import { lstat, readdir, readFile, rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import ts from 'typescript';
import { git } from '../../harness/git/run-git.ts';
import type { Candidate } from '../candidate.ts';
import { removedCodeLines, normalizeLine } from '../statement/find-leaks.ts';

const DERIVED_DIRS = new Set(['__pycache__', '.mypy_cache', '.pytest_cache', '.ruff_cache', '.pyright', '.pytype', '.nyc_output', 'htmlcov', '.vite', '.turbo', '.parcel-cache', '.next', '.nuxt', '.svelte-kit']);
const DERIVED_FILE = /(\.py[co]|\.tsbuildinfo|\.class)$|^\.coverage(\..*)?$|^\.eslintcache$|^lcov\.info$|^coverage\.xml$|^coverage-final\.json$/;
const SOURCE_MAP = /\.map$/;
const OUTPUT_DIRS = new Set(['dist', 'build', 'out']);
/** Third-party trees: never walked (their caches are not the repository's code). */
const THIRD_PARTY = new Set(['.git', '.venv', 'venv', 'site-packages', '.tox', '.nox']);
const SOURCE_EXT = /\.(py|[cm]?[jt]sx?|java|kt|go|rs|rb)$/;

export interface LeftoverOptions {
  /** The tree's tracked files (build-output files outside it are removed whole). Default: ask git; none when not a git work tree. */
  tracked?: Set<string>;
}

async function trackedFiles(treeDir: string): Promise<Set<string> | undefined> {
  const top = await git(['rev-parse', '--show-toplevel'], { cwd: treeDir, allowFailure: true });
  if (top.code !== 0 || resolve(top.stdout.trim()) !== resolve(treeDir)) return undefined;
  const listed = await git(['ls-files', '-z'], { cwd: treeDir });
  return new Set(listed.stdout.split('\0').filter(Boolean));
}

/** The tsconfig's output folders, repository-relative. */
function tsconfigOutDirs(treeDir: string): string[] {
  const path = join(treeDir, 'tsconfig.json');
  if (!ts.sys.fileExists(path)) return [];
  const read = ts.readConfigFile(path, ts.sys.readFile);
  const opts = (read.config as { compilerOptions?: { outDir?: string; declarationDir?: string } } | undefined)?.compilerOptions ?? {};
  const root = resolve(treeDir);
  return [opts.outDir, opts.declarationDir]
    .filter((d): d is string => typeof d === 'string' && d.length > 0)
    .map((d) => resolve(root, d))
    .filter((d) => d.startsWith(root + sep))
    .map((d) => d.slice(root.length + 1).split(sep).join('/'));
}

async function listAll(root: string, rel: string): Promise<string[]> {
  const entries = await readdir(join(root, rel), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    const path = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listAll(root, path)));
    else if (e.isFile() || e.isSymbolicLink()) out.push(path);
  }
  return out;
}

/** Names a removed symbol goes by (`calc.ts#Counter.add` → `Counter`, `add`), long enough to be evidence. */
function symbolWords(candidate: Pick<Candidate, 'symbols' | 'strategy'>): string[] {
  if (candidate.strategy === 'file') return [];
  const words = new Set<string>();
  for (const s of candidate.symbols) for (const part of (s.split('#')[1] ?? '').split('.')) if (part.length >= 3 && /^[A-Za-z_$][\w$]*$/.test(part)) words.add(part);
  return [...words];
}

function hasEvidence(text: string, lines: string[], words: string[]): boolean {
  const flat = normalizeLine(text);
  if (lines.some((l) => flat.includes(l))) return true;
  return words.some((w) => new RegExp(`(^|[^\\w$])${w.replace(/\$/g, '\\$')}([^\\w$]|$)`).test(text));
}

/** A tree's derived artefacts, found once; the part that depends on a candidate is decided per candidate. */
interface TreeScan {
  /** Derived by nature (caches, bytecode, buildinfo, coverage, source maps): always removed. */
  derived: string[];
  /** Folders removed whole. */
  dirs: string[];
  /** Untracked or ignored files in build-output folders: removed whole. */
  untrackedOutput: string[];
  /** Tracked files in build-output folders: removed when they carry evidence of the removed code. */
  trackedOutput: string[];
  texts: Map<string, string>;
}

/** Scans of trees whose tracked set the caller passed (the forge asks once per candidate over one checkout). */
const scans = new WeakMap<Set<string>, Map<string, Promise<TreeScan>>>();

async function scanTree(root: string, tracked: Set<string> | undefined): Promise<TreeScan> {
  const outDirs = new Set(tsconfigOutDirs(root));
  const scan: TreeScan = { derived: [], dirs: [], untrackedOutput: [], trackedOutput: [], texts: new Map() };
  const walk = async (rel: string, inOutput: boolean): Promise<void> => {
    const entries = await readdir(join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (THIRD_PARTY.has(e.name)) continue;
        if (e.name === 'node_modules') {
          const cache = await listAll(root, `${path}/.cache`);
          scan.derived.push(...cache);
          if (cache.length > 0) scan.dirs.push(`${path}/.cache`);
          continue;
        }
        const coverageOutput = e.name === 'coverage' && !(await listAll(root, path)).some((f) => SOURCE_EXT.test(f));
        if (DERIVED_DIRS.has(e.name) || coverageOutput) {
          scan.derived.push(...(await listAll(root, path)));
          scan.dirs.push(path);
          continue;
        }
        await walk(path, inOutput || OUTPUT_DIRS.has(e.name) || outDirs.has(path));
        continue;
      }
      if (!e.isFile()) continue;
      if (DERIVED_FILE.test(e.name)) scan.derived.push(path);
      else if (SOURCE_MAP.test(e.name)) {
        const text = await readFile(join(root, path), 'utf8').catch(() => '');
        if (text.includes('"mappings"')) scan.derived.push(path);
      } else if (inOutput) {
        if (tracked && !tracked.has(path)) scan.untrackedOutput.push(path);
        else {
          const st = await lstat(join(root, path));
          if (st.size <= 8 * 1024 * 1024) {
            scan.trackedOutput.push(path);
            scan.texts.set(path, await readFile(join(root, path), 'utf8').catch(() => ''));
          }
        }
      }
    }
  };
  await walk('', false);
  return scan;
}

/** Leftover files for a candidate, and the derived folders removed whole (to delete once emptied). */
async function scanLeftovers(treeDir: string, candidate: Pick<Candidate, 'edits' | 'symbols' | 'strategy'>, options: LeftoverOptions, fresh: boolean): Promise<{ files: string[]; dirs: string[] }> {
  const root = resolve(treeDir);
  let scan: TreeScan;
  if (options.tracked && !fresh) {
    let byRoot = scans.get(options.tracked);
    if (!byRoot) scans.set(options.tracked, (byRoot = new Map()));
    let pending = byRoot.get(root);
    if (!pending) byRoot.set(root, (pending = scanTree(root, options.tracked)));
    scan = await pending;
  } else scan = await scanTree(root, options.tracked ?? (await trackedFiles(root)));
  const edited = new Set(candidate.edits.map((e) => e.path));
  const lines = removedCodeLines(candidate);
  const words = symbolWords(candidate);
  const found = new Set<string>(scan.derived);
  for (const p of scan.untrackedOutput) if (!edited.has(p)) found.add(p);
  for (const p of scan.trackedOutput) if (!edited.has(p) && hasEvidence(scan.texts.get(p) ?? '', lines, words)) found.add(p);
  return { files: [...found].sort(), dirs: scan.dirs };
}

/**
 * The derived artefacts in `treeDir` that could give the candidate's removed code back, as repository-relative
 * file paths, sorted. Nothing is deleted. Pass `tracked` (the tree's files) to skip asking git; the tree is then
 * scanned once for all the candidates asked about with that same set (so do not change the tree in between).
 *
 * @example
 * const leftovers = await findLeftovers(checkout, candidate); // ['pkg/__pycache__/calc.cpython-311.pyc', 'tsconfig.tsbuildinfo']
 */
export async function findLeftovers(treeDir: string, candidate: Pick<Candidate, 'edits' | 'symbols' | 'strategy'>, options: LeftoverOptions = {}): Promise<string[]> {
  return (await scanLeftovers(treeDir, candidate, options, false)).files;
}

/**
 * Deletes the leftovers `findLeftovers` lists (and the cache folders they empty) and returns what it removed.
 *
 * @example
 * await applyCandidate(tree, candidate);
 * const { removed } = await stripLeftovers(tree, candidate);
 */
export async function stripLeftovers(treeDir: string, candidate: Pick<Candidate, 'edits' | 'symbols' | 'strategy'>, options: LeftoverOptions = {}): Promise<{ removed: string[] }> {
  const root = resolve(treeDir);
  const { files: removed, dirs } = await scanLeftovers(root, candidate, options, true);
  for (const path of removed) await rm(join(root, path), { force: true });
  // The cache folders removed whole go too, once nothing but empty folders is left in them.
  for (const dir of dirs) if ((await listAll(root, dir)).length === 0) await rm(join(root, dir), { recursive: true, force: true });
  return { removed };
}
