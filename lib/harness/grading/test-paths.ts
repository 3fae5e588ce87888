/**
 * Which paths of a repository are tests, and which configure the test runner. Grading reverts the agent's changes to
 * both (a fix must make the task's tests pass, not change them), and the integrity flags report them.
 *
 * The rules are by name, language-agnostic and deliberately broad: a false "test file" only costs the agent an edit
 * that grading ignores, while a missed one lets a test be rewritten.
 */
import { matchesGlob } from 'node:path';

/** Paths (globs, repository-relative, `/`-separated) that hold tests. */
export const TEST_FILE_GLOBS: readonly string[] = [
  '**/test_*.py',
  '**/*_test.py',
  '**/*_tests.py',
  '**/tests.py',
  '**/*_test.go',
  '**/*.{test,spec}.{js,jsx,ts,tsx,mjs,cjs,mts,cts}',
  '**/*{Test,Tests}.{java,kt}',
  '**/*_spec.rb',
  '**/{tests,test,__tests__,testdata,spec}/**',
];

/**
 * Files that configure how tests are collected or reported. Editing one can deselect, skip or re-label tests
 * (`addopts = --deselect …`, a conftest hook that rewrites reports), so grading puts them back.
 */
export const RUNNER_CONFIG_GLOBS: readonly string[] = [
  '**/conftest.py',
  '**/{pytest.ini,.pytest.ini,pytest.toml,.pytest.toml,tox.ini,setup.cfg,noxfile.py}',
  '**/{sitecustomize,usercustomize}.py',
  '**/*.pth',
  '**/{vitest,vite,jest,playwright}.config.*',
  '**/{vitest,vitest.workspace,jest.setup,jest.preset,karma.conf}.*',
  '**/.mocharc*',
  // Shared with other purposes: reverted only when their test-runner part changed (see `runnerSectionChanged`).
  '**/pyproject.toml',
  '**/package.json',
];

/**
 * Files that choose the environment the tests run in: requirement and constraint files, lockfiles, `setup.py` (its
 * `install_requires` literals are read). The graded run's environment is resolved from the tree it is given, so an
 * added requirement (a pytest plugin that loads itself, a wheel with a `.pth`) would run before the launcher's
 * baseline: grading puts these back to the base version, and the environment is the base tree's. (pyproject.toml's
 * and package.json's dependency sections are put back the same way: `dependencySectionChanged`; setup.cfg is runner
 * config already.)
 */
export const DEPENDENCY_MANIFEST_GLOBS: readonly string[] = [
  '**/*requirements*.txt',
  '**/requirements/*.txt',
  '**/*constraints*.txt',
  '**/{Pipfile,Pipfile.lock,poetry.lock,pdm.lock,uv.lock,setup.py}',
  '**/{package-lock.json,npm-shrinkwrap.json,yarn.lock,pnpm-lock.yaml,pnpm-workspace.yaml,.npmrc,.yarnrc,.yarnrc.yml}',
];

/** Runner-config files whose other parts (dependencies, metadata) an agent may legitimately edit. */
const SECTIONED_CONFIGS = new Set(['pyproject.toml', 'package.json']);

function matchesAny(path: string, globs: readonly string[]): boolean {
  return globs.some((g) => matchesGlob(path, g));
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** True for a path that holds tests by the rules above. */
export function isTestPath(path: string): boolean {
  return matchesAny(path, TEST_FILE_GLOBS);
}

/** True for a test-runner configuration file (conftest.py anywhere, pytest.ini, vitest.config.ts, …). */
export function isRunnerConfigPath(path: string): boolean {
  return matchesAny(path, RUNNER_CONFIG_GLOBS);
}

/** True for a runner config shared with other purposes (pyproject.toml, package.json). */
export function isSectionedRunnerConfig(path: string): boolean {
  return SECTIONED_CONFIGS.has(basename(path));
}

/** True for a file that chooses the environment (requirements*.txt, constraints, lockfiles, setup.py). */
export function isDependencyManifestPath(path: string): boolean {
  return matchesAny(path, DEPENDENCY_MANIFEST_GLOBS);
}

export type TestPathKind = 'task-test-file' | 'test-file' | 'runner-config' | 'dependency-manifest';

/**
 * How grading treats a path the diff touched: one of the task's test files, a file that is a test by name, a
 * runner config, a dependency manifest, or undefined for an ordinary source file.
 */
export function classifyPath(path: string, taskTestFiles: readonly string[]): TestPathKind | undefined {
  const clean = path.replace(/^\.\//, '');
  const isTaskFile = taskTestFiles.some((t) => {
    const entry = t.replace(/^\.\//, '').replace(/\/+$/, '');
    return entry === clean || clean.startsWith(`${entry}/`);
  });
  if (isTaskFile) return 'task-test-file';
  if (isRunnerConfigPath(clean)) return 'runner-config';
  if (isDependencyManifestPath(clean)) return 'dependency-manifest';
  if (isTestPath(clean)) return 'test-file';
  return undefined;
}
