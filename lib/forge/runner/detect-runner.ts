/**
 * The test command a folder's own files point to, when the spec gives none: pytest (a pytest configuration, or test
 * folders holding `test_*.py`), vitest / jest / node's runner (package.json's `test` script or dev dependencies),
 * `go test` (go.mod). The command writes per-test reports the harness reads (reporter flags added).
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunnerKind } from '../schemas.ts';
import { pytestConfig, pythonTestFiles, testFolders } from './python-project.ts';
import { withReporterFlags } from './reporter-flags.ts';
import { inferRunnerKind, readInvocation } from './runner-invocation.ts';

export interface DetectedRunner {
  kind: RunnerKind;
  testCommand: string;
  /** Why this command, one line each. */
  notes: string[];
  /** The package's `test` script, when the command runs it (`npm test`). */
  scriptCommand?: string;
}

interface PackageJson {
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
}

/** npm's placeholder for a package without tests. */
const NO_TEST_SCRIPT = /no test specified/;

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * package.json of a folder, or undefined (absent or not JSON).
 *
 * @example
 * const pkg = await readPackageJson('/src/ufo'); // { scripts: { test: 'vitest' }, devDependencies: { … } }
 */
export async function readPackageJson(dir: string): Promise<PackageJson | undefined> {
  try {
    return JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageJson;
  } catch {
    return undefined;
  }
}

/**
 * The package's `test` script and the runner it runs (`other` when none is recognised).
 *
 * @example
 * testScriptOf({ scripts: { test: 'vitest run' } }); // { script: 'vitest run', kind: 'vitest' }
 */
export function testScriptOf(pkg: PackageJson | undefined): { script?: string; kind: RunnerKind } {
  const script = pkg?.scripts?.['test'];
  if (typeof script !== 'string' || NO_TEST_SCRIPT.test(script)) return { kind: 'other' };
  return { script, kind: inferRunnerKind(script) };
}

function nodeRunner(pkg: PackageJson): DetectedRunner | undefined {
  const { script, kind: scriptKind } = testScriptOf(pkg);
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  const kind: RunnerKind = scriptKind !== 'other' ? scriptKind : 'vitest' in deps ? 'vitest' : 'jest' in deps ? 'jest' : 'other';
  if (kind !== 'vitest' && kind !== 'jest' && kind !== 'node-test') return undefined;
  const notes: string[] = [];
  let base: string;
  const invocation = script !== undefined && scriptKind === kind ? readInvocation(script) : undefined;
  if (script !== undefined && invocation && invocation.segmentIndex === 0 && invocation.assignments.length === 0 && invocation.tokens[0] === invocation.segment[0]) {
    // The script is the runner and its options alone: run it as written (npx finds the package's binaries).
    base = kind === 'node-test' ? script : `npx ${script}`;
    notes.push(`test command from package.json's test script (${script})`);
  } else if (script !== undefined && invocation) {
    // Steps before the runner (a build, env): npm runs the script, the reporter flags go after `--`.
    base = 'npm test';
    notes.push(`test command runs package.json's test script (${script}), which has steps before ${kind}`);
  } else {
    base = kind === 'vitest' ? 'npx vitest run' : kind === 'jest' ? 'npx jest' : 'node --test';
    notes.push(`test command for ${kind}, found in package.json's ${scriptKind === kind ? 'test script' : 'dependencies'}`);
  }
  const flagged = withReporterFlags(base, kind, script);
  if (flagged.note) notes.push(flagged.note);
  return { kind, testCommand: flagged.command, notes, ...(base === 'npm test' && script ? { scriptCommand: script } : {}) };
}

/**
 * The runner a folder's files point to, or undefined when none is recognised.
 *
 * @example
 * const found = await detectRunner('/tmp/calc'); // { kind: 'pytest', testCommand: 'python -m pytest -q tests', notes: [...] }
 */
export async function detectRunner(dir: string): Promise<DetectedRunner | undefined> {
  const config = await pytestConfig(dir);
  const pyTests = config || (await exists(join(dir, 'tests'))) || (await exists(join(dir, 'test'))) ? await pythonTestFiles(dir) : [];
  if (config) {
    const paths = config.testpaths.length > 0 ? config.testpaths : testFolders(pyTests);
    return {
      kind: 'pytest',
      testCommand: ['python -m pytest -q', ...paths].join(' '),
      notes: [`pytest configured in ${config.file}${paths.length ? `; tests in ${paths.join(' ')}` : ''}`],
    };
  }
  const pkg = await readPackageJson(dir);
  const node = pkg ? nodeRunner(pkg) : undefined;
  if (node) return node;
  if (await exists(join(dir, 'go.mod'))) return { kind: 'go', testCommand: 'go test -json ./...', notes: ['go.mod: go test -json over every package'] };
  const folders = testFolders(pyTests);
  if (folders.length > 0) {
    return { kind: 'pytest', testCommand: ['python -m pytest -q', ...folders].join(' '), notes: [`no pytest configuration; test_*.py files in ${folders.join(' ')}: pytest`] };
  }
  return undefined;
}
