/**
 * How a forge run tests the repository: the test command (given, or derived from the repository), the runner kind,
 * the per-file filter the fast first pass uses (derived from the test command, so it inherits its environment and
 * working directory) and the environment every sandboxed command gets.
 *
 * The base checkout (`work.checkoutDir`: the tracked files, exactly what every sandbox gets) is what is read; an
 * untracked file of a local repository (a virtualenv, `node_modules`) never reaches a sandbox, so it must not steer
 * the command either.
 *
 * Monorepo packages: when `includePaths` names one package folder with its own project file and the root has no test
 * configuration, the tests run in that folder (`cd <pkg> && …`). Test ids stay repository-relative (vitest and jest
 * report absolute paths, made relative to the repository; pytest gets `--rootdir` at the repository root), and
 * `fillFilter` takes repository-relative files off the folder's prefix, so the filter's `{files}` stay
 * repository-relative too.
 *
 * @example
 * const runner = await resolveRunner(work, spec);
 * const runnable = runnableSpec(spec, runner); // testCommand, runner.filterCommand, env filled in
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ValidationError } from '../../errors.ts';
import type { WorkRepo } from '../forge-git.ts';
import type { ForgeSpec, RunnableForgeSpec, RunnerKind } from '../schemas.ts';
import { deriveFilterCommand } from './derive-filter.ts';
import { detectRunner, readPackageJson, testScriptOf, type DetectedRunner } from './detect-runner.ts';
import { pytestConfig, pythonTestFiles, srcLayoutImports } from './python-project.ts';
import { withReporterFlags } from './reporter-flags.ts';
import { inferRunnerKind, readInvocation } from './runner-invocation.ts';
import { andSegments, shellTokens } from './shell-words.ts';

export interface ResolvedRunner {
  /** The whole suite, writing per-test reports the harness reads. */
  testCommand: string;
  kind: RunnerKind;
  /** The test command for some test files only, `{files}` standing for them; absent when the runner takes none. */
  filterCommand?: string;
  /** Environment every sandboxed command gets (the spec's own entries win). */
  env: Record<string, string>;
  /** What was derived and why, one line each (shown by `forge plan` and logged by `forge run`). */
  notes: string[];
  /** The folder the tests run in, repository-relative (`cd <dir> && …`); absent for the repository's root. */
  workingDir?: string;
}

/** Project files that make a folder a package with its own tests. */
const PROJECT_FILES = ['package.json', 'pyproject.toml', 'setup.cfg', 'pytest.ini', 'tox.ini', 'go.mod'];

function shellQuoteIfNeeded(s: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The folder of a leading `cd <dir> &&`, or undefined.
 *
 * @example
 * leadingCdDir('cd packages/url && npx vitest run'); // 'packages/url'
 */
export function leadingCdDir(command: string): string | undefined {
  const tokens = shellTokens(command);
  if (!tokens) return /^\s*cd\s+([^\s&;|]+)\s*&&/.exec(command)?.[1];
  const segments = andSegments(tokens);
  const first = segments[0] ?? [];
  const [cd, dir] = first;
  if (segments.length < 2 || first.length !== 2 || cd?.kind !== 'word' || dir?.kind !== 'word') return undefined;
  return cd.value === 'cd' ? dir.value.replace(/\/+$/, '') : undefined;
}

/** The one package folder `includePaths` names (glob tails dropped), when it names exactly one. */
function includedFolder(spec: ForgeSpec): string | undefined {
  if (spec.includePaths.length !== 1) return undefined;
  const folder = spec.includePaths[0]!.replace(/^\.\//, '').replace(/(\/\*\*?)+$/, '').replace(/\/+$/, '');
  return folder === '' || /[*?[{]/.test(folder) || folder.startsWith('..') ? undefined : folder;
}

async function hasProjectFile(dir: string): Promise<boolean> {
  for (const f of PROJECT_FILES) if (await stat(join(dir, f)).then((s) => s.isFile(), () => false)) return true;
  return false;
}

/** The package folder holding `folder` (itself or the nearest parent below the root with a project file). */
async function packageFolder(root: string, folder: string | undefined): Promise<string | undefined> {
  // `includePaths: ['packages/url/src/**']` names the package's sources, not the package.
  for (let f = folder; f; f = f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : undefined) {
    if (await hasProjectFile(join(root, f))) return f;
  }
  return undefined;
}

/** The command with `text` inserted before the first word of its runner's `&&` segment (after any `cd dir &&`). */
function prefixRunnerSegment(command: string, text: string, kind: RunnerKind): string | undefined {
  const inv = readInvocation(command, kind);
  const first = inv?.segment[0];
  if (!first) return undefined;
  return command.slice(0, first.start) + text + command.slice(first.start);
}

/** A derived pytest command run in a package folder keeps repository-relative ids: pytest's rootdir is the root. */
function pytestInFolder(command: string, folder: string): string {
  const up = folder.split('/').map(() => '..').join('/');
  return command.replace(/^python -m pytest -q/, `python -m pytest -q --rootdir=${up}`);
}

async function derive(work: WorkRepo, spec: ForgeSpec): Promise<DetectedRunner & { workingDir?: string }> {
  const atRoot = await detectRunner(work.checkoutDir);
  if (atRoot) return atRoot;
  const folder = await packageFolder(work.checkoutDir, includedFolder(spec));
  if (folder) {
    const inFolder = await detectRunner(join(work.checkoutDir, folder));
    if (inFolder) {
      const command = inFolder.kind === 'pytest' ? pytestInFolder(inFolder.testCommand, folder) : inFolder.testCommand;
      return { ...inFolder, testCommand: `cd ${shellQuoteIfNeeded(folder)} && ${command}`, notes: [`the root has no test configuration; tests run in the included package ${folder}`, ...inFolder.notes], workingDir: folder };
    }
  }
  throw new ValidationError(
    `forge spec is not valid: testCommand: required — no test runner recognised in the repository${folder ? ` nor in ${folder}` : ''} (looked for a pytest configuration or tests/test_*.py, package.json with vitest, jest or node --test, go.mod)`,
    [{ path: 'testCommand', message: 'required: no test runner recognised in the repository' }],
  );
}

/**
 * The runner of a forge run: the spec's test command (reporter flags added where the harness could not read per-test
 * results otherwise) or one derived from the repository, its kind, the filter derived from it, and `PYTHONPATH=src`
 * for a `src/` layout. Throws `Flywheel.ValidationError` naming `testCommand` when no command is given and none is
 * recognised.
 *
 * @example
 * const runner = await resolveRunner(work, parseForgeSpec({ repo: { kind: 'local', path: '/src/click' } }));
 * // { testCommand: 'PYTHONPATH=src python -m pytest -q tests', kind: 'pytest', filterCommand: 'PYTHONPATH=src python -m pytest -q {files}', env: { PYTHONPATH: 'src' }, notes: [...] }
 */
export async function resolveRunner(work: WorkRepo, spec: ForgeSpec): Promise<ResolvedRunner> {
  const notes: string[] = [];
  let testCommand: string;
  let kind: RunnerKind;
  let workingDir: string | undefined;
  if (spec.testCommand) {
    testCommand = spec.testCommand;
    workingDir = leadingCdDir(testCommand);
    const script = testScriptOf(await readPackageJson(join(work.checkoutDir, workingDir ?? '.')));
    kind = spec.runner.kind;
    if (kind === 'other') {
      kind = inferRunnerKind(testCommand, script.kind);
      if (kind !== 'other') notes.push(`runner kind ${kind}, read from the test command`);
    }
    const flagged = withReporterFlags(testCommand, kind, script.script);
    testCommand = flagged.command;
    if (flagged.note) notes.push(flagged.note);
  } else {
    const derived = await derive(work, spec);
    testCommand = derived.testCommand;
    kind = spec.runner.kind !== 'other' ? spec.runner.kind : derived.kind;
    workingDir = derived.workingDir;
    notes.push(`test command derived: ${testCommand}`, ...derived.notes);
  }

  const env: Record<string, string> = {};
  if (kind === 'pytest' && spec.env['PYTHONPATH'] === undefined && !/\bPYTHONPATH=/.test(testCommand)) {
    const projectDir = join(work.checkoutDir, workingDir ?? '.');
    const config = await pytestConfig(projectDir);
    const imported = config?.pythonpath.some((p) => p.replace(/^\.\//, '').replace(/\/+$/, '') === 'src') ? [] : await srcLayoutImports(projectDir, await pythonTestFiles(projectDir));
    if (imported.length > 0) {
      // The command carries it (tasks store the command, not the forge's env); relative to the folder pytest runs in.
      const prefixed = prefixRunnerSegment(testCommand, 'PYTHONPATH=src ', kind);
      if (prefixed) testCommand = prefixed;
      if (!workingDir) env['PYTHONPATH'] = 'src';
      notes.push(`src/ layout: the tests import ${imported.join(', ')} from src/, and the sandbox's Python environment never installs the project, so PYTHONPATH=src${prefixed ? ' (in the test command)' : ''}`);
    }
  }

  let filterCommand = spec.runner.filterCommand;
  if (!filterCommand) {
    filterCommand = deriveFilterCommand(testCommand, kind);
    if (filterCommand) notes.push(`first-pass filter derived from the test command: ${filterCommand}`);
    else if (kind !== 'other') notes.push(`no first-pass filter: the test command could not be taken apart safely; give runner.filterCommand ({files}) for a faster first pass`);
  }
  return { testCommand, kind, ...(filterCommand ? { filterCommand } : {}), env, notes, ...(workingDir ? { workingDir } : {}) };
}

/**
 * The spec with the resolved runner filled in.
 *
 * @example
 * const runnable = runnableSpec(spec, await resolveRunner(work, spec)); // runnable.testCommand is a string
 */
export function runnableSpec(spec: ForgeSpec, runner: ResolvedRunner): RunnableForgeSpec {
  return {
    ...spec,
    testCommand: runner.testCommand,
    runner: { kind: runner.kind, ...(runner.filterCommand ? { filterCommand: runner.filterCommand } : {}) },
    env: { ...runner.env, ...spec.env },
  };
}
