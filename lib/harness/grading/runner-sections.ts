/**
 * pyproject.toml and package.json configure the test runner, the environment and much else. Grading reverts such a
 * file only when its test-runner part or its dependency part changed, so an agent that edits the project's metadata
 * keeps it, and one that adds `--deselect` to `[tool.pytest.ini_options]`, rewrites `scripts.test` or adds a
 * dependency (which would choose the graded run's environment) loses it. A file that does not parse counts as changed.
 */
import { parse as parseToml } from 'smol-toml';
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

function pick(obj: unknown, path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Json)[key];
  }
  return cur;
}

/** The parts of each file that steer test collection, reporting or the test script. */
const SECTIONS: Record<string, { parse: (text: string) => unknown; paths: ReadonlyArray<readonly string[]> }> = {
  'pyproject.toml': {
    parse: (text) => parseToml(text),
    paths: [['tool', 'pytest'], ['project', 'entry-points', 'pytest11'], ['tool', 'poetry', 'plugins', 'pytest11'], ['tool', 'tox']],
  },
  'package.json': {
    parse: (text) => JSON.parse(text) as unknown,
    paths: [['jest'], ['vitest'], ['mocha'], ['ava'], ['scripts', 'test'], ['scripts', 'pretest'], ['scripts', 'posttest']],
  },
};

/** The parts of each file that choose the environment (what gets installed), put back like the runner's. */
const DEPENDENCY_SECTIONS: Record<string, ReadonlyArray<readonly string[]>> = {
  'pyproject.toml': [['project', 'dependencies'], ['project', 'optional-dependencies'], ['dependency-groups'], ['build-system'], ['tool', 'poetry', 'dependencies'], ['tool', 'poetry', 'group'], ['tool', 'poetry', 'dev-dependencies'], ['tool', 'uv'], ['tool', 'pdm']],
  'package.json': [['dependencies'], ['devDependencies'], ['optionalDependencies'], ['peerDependencies'], ['bundleDependencies'], ['bundledDependencies'], ['overrides'], ['resolutions'], ['pnpm'], ['workspaces']],
};

function sectionsChanged(path: string, before: string | undefined, after: string | undefined, paths: ReadonlyArray<readonly string[]> | undefined): boolean {
  const spec = SECTIONS[path.slice(path.lastIndexOf('/') + 1)];
  if (!spec || !paths) return before !== after;
  const read = (text: string | undefined): { ok: true; value: unknown } | { ok: false } => {
    if (text === undefined) return { ok: true, value: undefined };
    try {
      return { ok: true, value: spec.parse(text) };
    } catch {
      return { ok: false };
    }
  };
  const a = read(before);
  const b = read(after);
  if (!a.ok || !b.ok) return true;
  return paths.some((p) => !isDeepStrictEqual(pick(a.value, p), pick(b.value, p)));
}

/**
 * True when the dependency sections of `before` and `after` differ (or either fails to parse).
 *
 * @example
 * dependencySectionChanged('pyproject.toml', base, agents) // true if [project].dependencies changed
 */
export function dependencySectionChanged(path: string, before: string | undefined, after: string | undefined): boolean {
  return sectionsChanged(path, before, after, DEPENDENCY_SECTIONS[path.slice(path.lastIndexOf('/') + 1)]);
}

/**
 * True when the test-runner sections of `before` and `after` differ (or either fails to parse); `undefined` for a
 * file absent on one side counts as a change when the other side has a runner section.
 *
 * @example
 * runnerSectionChanged('pyproject.toml', base, agents) // true if [tool.pytest.ini_options] changed
 */
export function runnerSectionChanged(path: string, before: string | undefined, after: string | undefined): boolean {
  return sectionsChanged(path, before, after, SECTIONS[path.slice(path.lastIndexOf('/') + 1)]?.paths);
}
