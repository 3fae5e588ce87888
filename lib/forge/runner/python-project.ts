/**
 * What a Python checkout says about its tests: the pytest configuration (which file, `testpaths`, `pythonpath`), the
 * test files present, and whether it is a `src/` layout whose tests import a package that only `PYTHONPATH=src`
 * makes importable (the sandbox's Python environment never has the project installed:
 * `lib/harness/environment/python-layer.ts`).
 */
import { glob, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';

export interface PytestConfig {
  /** The file holding pytest's configuration (`pyproject.toml`, `pytest.ini`, `setup.cfg`, `tox.ini`). */
  file: string;
  testpaths: string[];
  /** pytest's own `pythonpath` setting (pytest ≥ 7 puts these on sys.path). */
  pythonpath: string[];
}

/** Folders never searched for tests: environments, caches, VCS and build output. */
const SKIPPED_DIRS = new Set(['.git', 'node_modules', '.venv', 'venv', 'env', '.tox', '.nox', '__pycache__', 'build', 'dist', '.mypy_cache', '.pytest_cache', 'site-packages', '.eggs']);
const MAX_SCANNED_FILES = 400;

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

async function isDir(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value === 'string') return value.split(/\s+/).filter(Boolean);
  return [];
}

/**
 * `key = value` pairs of one INI section (continuation lines joined), or undefined when the section is absent.
 *
 * @example
 * iniSection('[pytest]\ntestpaths =\n    tests\n    more\n', 'pytest'); // { testpaths: 'tests more' }
 */
export function iniSection(text: string, section: string): Record<string, string> | undefined {
  let inSection = false;
  let found = false;
  let key: string | undefined;
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(raw);
    if (header) {
      inSection = header[1]!.trim() === section;
      found ||= inSection;
      key = undefined;
      continue;
    }
    if (!inSection || /^\s*[#;]/.test(raw) || raw.trim() === '') continue;
    const pair = /^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$/.exec(raw);
    if (pair && !/^\s/.test(raw)) {
      key = pair[1]!;
      out[key] = pair[2]!.trim();
    } else if (key && /^\s/.test(raw)) out[key] = `${out[key]} ${raw.trim()}`.trim();
  }
  return found ? out : undefined;
}

/**
 * pytest's configuration in a folder, in pytest's own order of precedence, or undefined when none configures it.
 *
 * @example
 * const cfg = await pytestConfig('/src/click'); // { file: 'pyproject.toml', testpaths: ['tests'], pythonpath: [] }
 */
export async function pytestConfig(dir: string): Promise<PytestConfig | undefined> {
  for (const name of ['pytest.ini', '.pytest.ini']) {
    const text = await readText(join(dir, name));
    if (text === undefined) continue;
    const s = iniSection(text, 'pytest') ?? {};
    return { file: name, testpaths: listOf(s['testpaths']), pythonpath: listOf(s['pythonpath']) };
  }
  const pyproject = await readText(join(dir, 'pyproject.toml'));
  if (pyproject !== undefined) {
    try {
      const tool = (parseToml(pyproject) as { tool?: { pytest?: Record<string, unknown> & { ini_options?: Record<string, unknown> } } }).tool;
      const section = tool?.pytest?.ini_options ?? tool?.pytest;
      if (section) return { file: 'pyproject.toml', testpaths: listOf(section['testpaths']), pythonpath: listOf(section['pythonpath']) };
    } catch {
      /* not TOML pytest can read either: other files may still configure it */
    }
  }
  for (const [name, section] of [['tox.ini', 'pytest'], ['setup.cfg', 'tool:pytest']] as const) {
    const text = await readText(join(dir, name));
    const s = text === undefined ? undefined : iniSection(text, section);
    if (s) return { file: name, testpaths: listOf(s['testpaths']), pythonpath: listOf(s['pythonpath']) };
  }
  return undefined;
}

/**
 * Python test files (and conftests) under a folder, relative to it, sorted; at most a few hundred.
 *
 * @example
 * await pythonTestFiles('/src/calc'); // ['tests/conftest.py', 'tests/test_add.py']
 */
export async function pythonTestFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const it = glob('**/{test_*.py,*_test.py,conftest.py}', { cwd: dir, exclude: (name) => SKIPPED_DIRS.has(name.slice(name.lastIndexOf('/') + 1)) });
  for await (const file of it) {
    out.push(file);
    if (out.length >= MAX_SCANNED_FILES) break;
  }
  return out.sort();
}

/**
 * Conventional test folders present (`tests`, `test`) that hold Python test files.
 *
 * @example
 * testFolders(['tests/test_a.py', 'test/conftest.py']); // ['tests']
 */
export function testFolders(files: readonly string[]): string[] {
  return ['tests', 'test'].filter((d) => files.some((f) => f.startsWith(`${d}/`) && !f.endsWith('conftest.py')));
}

/**
 * The packages of a `src/` layout that the tests import (`src/<name>/__init__.py`, and a test file with
 * `import <name>` or `from <name>`); empty when the folder is no such layout.
 *
 * @example
 * await srcLayoutImports('/src/click'); // ['click']
 */
export async function srcLayoutImports(dir: string, testFiles: readonly string[]): Promise<string[]> {
  if (!(await isDir(join(dir, 'src')))) return [];
  const packages: string[] = [];
  for await (const init of glob('src/*/__init__.py', { cwd: dir })) packages.push(init.split('/')[1]!);
  if (packages.length === 0) return [];
  const imported = new Set<string>();
  for (const file of testFiles) {
    if (file.startsWith('src/')) continue;
    const text = (await readText(join(dir, file))) ?? '';
    for (const name of packages) {
      if (new RegExp(`^\\s*(?:from|import)\\s+${name.replaceAll('.', '\\.')}(?:[\\s.,]|$)`, 'm').test(text)) imported.add(name);
    }
    if (imported.size === packages.length) break;
  }
  return [...imported].sort();
}
