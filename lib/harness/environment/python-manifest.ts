/**
 * What a Python tree declares it needs, read without running any of its code: `requirements*.txt` files that look
 * like runtime or test requirements (following `-r` includes inside the tree), `pyproject.toml`'s
 * `[project].dependencies`, its test-ish `[project.optional-dependencies]` and `[dependency-groups]`, `setup.cfg`'s
 * `install_requires` / `extras_require`, and the string literals of `setup.py`'s `install_requires` (a regular
 * expression, never executed). Also the project's own identity: its distribution names and top-level import
 * packages, so neither the plan nor the built environment ever holds a release of the package under test.
 *
 * Left out on purpose: editable and local-path requirements (`-e .`, `./pkg`: the project itself or code of the
 * tree), direct URLs (`pkg @ https://…`, `git+…`: hosts outside the package index), and index options inside
 * requirement files (`--index-url`, `--find-links`: attacker-chosen indexes). Each is recorded as skipped.
 */
import { join, normalize } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { listTreeDir, readTreeFile, treeHasFile } from './read-tree.ts';

export interface PythonRequirement {
  /** The requirement as pip reads it (`six>=1.16; python_version >= "3"`). */
  spec: string;
  /** Normalized distribution name (PEP 503: lower case, runs of `-_.` as `-`). */
  name: string;
  /** The tree file it came from. */
  from: string;
}

export interface PythonPlan {
  requirements: PythonRequirement[];
  /** Lines not installed, with why. */
  skipped: Array<{ line: string; from: string; reason: string }>;
  /** The tree's files the plan was read from. */
  files: string[];
  /** The project's distribution names (normalized). */
  projectNames: string[];
  /** The project's top-level import packages and modules. */
  topLevel: string[];
}

export function normalizeDistName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

const NAME = /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)/;
/** Requirement files taken as runtime or test requirements: requirements.txt, requirements-test.txt, test-requirements.txt, requirements/dev.txt … */
const REQUIREMENT_FILE = /^(?:(?:test|tests|testing|dev|ci)[-_])?requirements(?:[-_.](?:test|tests|testing|dev|ci|base|common|prod|runtime|core|install|run|all))*\.txt$/i;
const REQUIREMENT_DIR_FILE = /^(?:base|common|core|prod|production|runtime|install|run|test|tests|testing|dev|ci|requirements)\.txt$/i;
const TEST_EXTRAS = new Set(['test', 'tests', 'testing', 'dev']);
const NOT_MODULES = new Set(['setup', 'conftest', 'noxfile', 'tasks', 'manage', 'fabfile', 'versioneer', 'docs', 'test', 'tests', 'testing', 'examples', 'benchmarks', 'scripts']);

/** A requirement spec, or why it is not installed. */
export function classifyRequirement(raw: string): { name: string; spec: string } | { reason: string } {
  const spec = raw.trim();
  if (/^(-e|--editable)\b/.test(spec)) return { reason: 'editable (the project or local code)' };
  if (/^(\.|\/|~|file:)/.test(spec) || /^[A-Za-z]:\\/.test(spec)) return { reason: 'a local path' };
  if (/^[a-z+]+:\/\//i.test(spec) || /^git\+/.test(spec)) return { reason: 'a URL outside the package index' };
  if (/\s@\s*\S/.test(spec.split(';')[0] ?? '')) return { reason: 'a direct URL reference' };
  if (spec.startsWith('-')) return { reason: 'a pip option' };
  const m = NAME.exec(spec);
  if (!m) return { reason: 'not a requirement' };
  return { name: normalizeDistName(m[1]!), spec };
}

async function readRequirementsFile(treeDir: string, rel: string, plan: PythonPlan, seen: Set<string>): Promise<void> {
  const key = normalize(rel);
  if (seen.has(key) || key.startsWith('..')) return;
  seen.add(key);
  const text = await readTreeFile(treeDir, key);
  if (text === undefined) return;
  plan.files.push(key);
  // Continuation lines (`\` at the end) join the next.
  const lines = text.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  for (const rawLine of lines) {
    const line = rawLine.replace(/(^|\s)#.*$/, '').trim();
    if (!line) continue;
    const include = /^(?:-r|--requirement)(?:\s+|=)(\S+)$/.exec(line);
    if (include) {
      await readRequirementsFile(treeDir, join(key, '..', include[1]!), plan, seen);
      continue;
    }
    // Per-requirement options (`--hash=…`) are dropped; the requirement stays.
    const spec = line.replace(/\s--hash[=\s]\S+/g, '').trim();
    const c = classifyRequirement(spec);
    if ('reason' in c) plan.skipped.push({ line, from: key, reason: c.reason });
    else plan.requirements.push({ ...c, from: key });
  }
}

function addSpecs(plan: PythonPlan, specs: unknown, from: string): void {
  if (!Array.isArray(specs)) return;
  for (const s of specs) {
    if (typeof s !== 'string') continue;
    const c = classifyRequirement(s);
    if ('reason' in c) plan.skipped.push({ line: s, from, reason: c.reason });
    else plan.requirements.push({ ...c, from });
  }
}

/** `setup.cfg`'s sections as key → value (multi-line values kept as lines). */
function parseIni(text: string): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  let section = '';
  let key = '';
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s*[#;]/.test(raw)) continue;
    const header = /^\[([^\]]+)\]\s*$/.exec(raw);
    if (header) {
      section = header[1]!.trim();
      out[section] ??= {};
      key = '';
      continue;
    }
    if (/^\s+\S/.test(raw) && key) {
      out[section]![key] += `\n${raw.trim()}`;
      continue;
    }
    const kv = /^([^=:\s][^=:]*?)\s*[=:]\s*(.*)$/.exec(raw);
    if (kv && section) {
      key = kv[1]!.trim().toLowerCase().replace(/-/g, '_');
      out[section]![key] = kv[2]!.trim();
    }
  }
  return out;
}

const lines = (value: string | undefined) => (value ?? '').split(/[\n;]/).map((l) => l.replace(/#.*$/, '').trim()).filter(Boolean);

function stringLiterals(text: string): string[] {
  return [...text.matchAll(/(['"])((?:(?!\1)[^\\\n])*)\1/g)].map((m) => m[2]!);
}

/**
 * The install plan of a Python tree; undefined when the tree is not a Python project (no manifest, no `*.py` within
 * three folder levels).
 */
export async function readPythonPlan(treeDir: string): Promise<PythonPlan | undefined> {
  const plan: PythonPlan = { requirements: [], skipped: [], files: [], projectNames: [], topLevel: [] };
  const root = await listTreeDir(treeDir);
  const seen = new Set<string>();
  for (const e of root) if (e.file && REQUIREMENT_FILE.test(e.name)) await readRequirementsFile(treeDir, e.name, plan, seen);
  for (const e of await listTreeDir(treeDir, 'requirements')) if (e.file && REQUIREMENT_DIR_FILE.test(e.name)) await readRequirementsFile(treeDir, join('requirements', e.name), plan, seen);

  const pyproject = await readTreeFile(treeDir, 'pyproject.toml');
  if (pyproject !== undefined) {
    plan.files.push('pyproject.toml');
    let toml: Record<string, unknown> = {};
    try {
      toml = parseToml(pyproject) as Record<string, unknown>;
    } catch {
      plan.skipped.push({ line: 'pyproject.toml', from: 'pyproject.toml', reason: 'not valid TOML' });
    }
    const project = (toml['project'] ?? {}) as Record<string, unknown>;
    if (typeof project['name'] === 'string') plan.projectNames.push(normalizeDistName(project['name']));
    addSpecs(plan, project['dependencies'], 'pyproject.toml');
    const extras = (project['optional-dependencies'] ?? {}) as Record<string, unknown>;
    for (const [extra, specs] of Object.entries(extras)) if (TEST_EXTRAS.has(extra.toLowerCase())) addSpecs(plan, specs, 'pyproject.toml');
    const groups = (toml['dependency-groups'] ?? {}) as Record<string, unknown>;
    for (const [group, specs] of Object.entries(groups)) if (TEST_EXTRAS.has(group.toLowerCase())) addSpecs(plan, specs, 'pyproject.toml');
    const poetry = ((toml['tool'] as Record<string, unknown> | undefined)?.['poetry'] ?? {}) as Record<string, unknown>;
    if (typeof poetry['name'] === 'string') plan.projectNames.push(normalizeDistName(poetry['name']));
  }

  const setupCfg = await readTreeFile(treeDir, 'setup.cfg');
  if (setupCfg !== undefined) {
    plan.files.push('setup.cfg');
    const ini = parseIni(setupCfg);
    const name = ini['metadata']?.['name'];
    if (name) plan.projectNames.push(normalizeDistName(name));
    addSpecs(plan, lines(ini['options']?.['install_requires']), 'setup.cfg');
    for (const [extra, value] of Object.entries(ini['options.extras_require'] ?? {})) if (TEST_EXTRAS.has(extra)) addSpecs(plan, lines(value), 'setup.cfg');
  }

  const setupPy = await readTreeFile(treeDir, 'setup.py');
  if (setupPy !== undefined) {
    plan.files.push('setup.py');
    const name = /\bname\s*=\s*['"]([A-Za-z0-9][A-Za-z0-9._-]*)['"]/.exec(setupPy);
    if (name) plan.projectNames.push(normalizeDistName(name[1]!));
    for (const field of ['install_requires', 'tests_require']) {
      const list = new RegExp(`\\b${field}\\s*=\\s*\\[([^\\]]*)\\]`).exec(setupPy);
      if (list) addSpecs(plan, stringLiterals(list[1]!), 'setup.py');
    }
  }

  // Top-level import packages: folders with __init__.py at the root or under src/, and modules at the root.
  for (const base of ['.', 'src']) {
    for (const e of await listTreeDir(treeDir, base)) {
      const rel = base === '.' ? e.name : join(base, e.name);
      if (e.dir && /^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name) && !NOT_MODULES.has(e.name) && (await readTreeFile(treeDir, join(rel, '__init__.py'))) !== undefined) plan.topLevel.push(e.name);
      if (e.file && /^[A-Za-z_][A-Za-z0-9_]*\.py$/.test(e.name)) {
        const mod = e.name.slice(0, -3);
        if (!NOT_MODULES.has(mod) && !/^test_|_test$/.test(mod)) plan.topLevel.push(mod);
      }
    }
  }
  plan.projectNames = [...new Set(plan.projectNames)].sort();
  plan.topLevel = [...new Set(plan.topLevel)].sort();

  // A requirement on the project itself (`mypkg[test]` in its own extras) would install a release of the package
  // under test from the index: never.
  const own = new Set([...plan.projectNames, ...plan.topLevel.map(normalizeDistName)]);
  plan.requirements = plan.requirements.filter((r) => {
    if (!own.has(r.name)) return true;
    plan.skipped.push({ line: r.spec, from: r.from, reason: 'the project itself (package under test)' });
    return false;
  });
  // One line per distinct spec, in a stable order (the key must not depend on the order files were listed in).
  const unique = new Map<string, PythonRequirement>();
  for (const r of plan.requirements) if (!unique.has(r.spec)) unique.set(r.spec, r);
  plan.requirements = [...unique.values()].sort((a, b) => (a.name === b.name ? (a.spec < b.spec ? -1 : 1) : a.name < b.name ? -1 : 1));

  const isPython = plan.files.length > 0 || (await treeHasFile(treeDir, (n) => n.endsWith('.py')));
  return isPython ? plan : undefined;
}
