/**
 * Where a test runner sits in a command, read from its tokens: the runner kind, the word that starts it, and which of
 * the words after it are options, option values and positional arguments (test paths, go packages). Both the filter
 * derivation and the reporter flags work from this reading, so they agree on what a command is.
 */
import type { RunnerKind } from '../schemas.ts';
import { andSegments, isAssignment, shellTokens, type ShellToken, type ShellWord } from './shell-words.ts';

/** Options that take the next word as their value (when not written `--opt=value`), per runner. */
const VALUE_OPTIONS: Record<Exclude<RunnerKind, 'other'>, ReadonlySet<string>> = {
  pytest: new Set([
    '-k', '-m', '-p', '-c', '-o', '-W', '-n', '-r', '--rootdir', '--deselect', '--ignore', '--ignore-glob', '--junitxml', '--junit-xml',
    '--maxfail', '--tb', '--durations', '--durations-min', '--cov', '--cov-report', '--cov-config', '--cov-fail-under', '--basetemp',
    '--confcutdir', '--override-ini', '--log-level', '--log-cli-level', '--log-file', '--import-mode', '--timeout', '--dist',
    '--numprocesses', '--maxprocesses', '--reruns', '--randomly-seed', '--config-file', '--inifile', '--capture', '--color',
    '--pyargs-root', '--doctest-glob', '--html', '--benchmark-json', '--report-log',
  ]),
  vitest: new Set([
    '--reporter', '--outputFile', '--config', '-c', '--root', '-r', '--dir', '--project', '--environment', '--pool', '-t',
    '--testNamePattern', '--shard', '--exclude', '--maxWorkers', '--minWorkers', '--testTimeout', '--hookTimeout', '--mode',
    '--retry', '--bail', '--sequence.seed', '--coverage.provider', '--coverage.reporter', '--coverage.reportsDirectory', '--workspace',
    '--browser.name', '--typecheck.tsconfig',
  ]),
  jest: new Set([
    '--config', '-c', '--outputFile', '--testNamePattern', '-t', '--testPathPattern', '--testPathPatterns', '--maxWorkers', '-w',
    '--reporters', '--selectProjects', '--shard', '--testTimeout', '--rootDir', '--roots', '--testPathIgnorePatterns', '--coverageReporters',
    '--coverageDirectory', '--testEnvironment', '--setupFiles', '--setupFilesAfterEnv', '--seed', '--testRunner', '--testMatch',
  ]),
  'node-test': new Set([
    '--test-reporter', '--test-reporter-destination', '--import', '--require', '-r', '--loader', '--experimental-loader',
    '--test-name-pattern', '--test-skip-pattern', '--test-concurrency', '--test-timeout', '--conditions', '-C', '--env-file',
    '--test-shard', '--test-isolation', '--stack-size', '--max-old-space-size',
  ]),
  go: new Set([
    '-run', '-skip', '-count', '-timeout', '-tags', '-p', '-parallel', '-cpu', '-bench', '-benchtime', '-coverprofile', '-covermode',
    '-coverpkg', '-o', '-exec', '-ldflags', '-gcflags', '-mod', '-shuffle', '-failfast-count', '-vet', '-modfile', '-overlay', '-pkgdir',
  ]),
};

/** Package-manager scripts that run a project's `test` script (`npm test`, `npm run test`, `yarn test`, `pnpm test`). */
const SCRIPT_RUNNERS = new Set(['npm', 'yarn', 'pnpm', 'bun']);

/**
 * Only npm keeps the words after the script name for itself until a `--`; yarn, pnpm (≥ 7) and `bun run` hand them
 * to the script, and pass a `--` through as a word (`vitest -- --reporter=json` would read no option after it).
 */
const NEEDS_DOUBLE_DASH = new Set(['npm']);

export interface RunnerInvocation {
  kind: Exclude<RunnerKind, 'other'>;
  /** The word that starts the runner (`pytest`, `vitest`, `jest`, `node`, the `test` of `go test`, the `--` of `npm test --`). */
  runnerWord: ShellWord;
  /** The runner's subcommand word when it has one (`run` of `vitest run`). */
  subcommand?: ShellWord;
  /** Words after the runner (options, their values, positionals) in order; redirections are left out. */
  options: ShellWord[];
  positionals: ShellWord[];
  /** The segment's env assignments (`PYTHONPATH=src`). */
  assignments: ShellWord[];
  /** The `&&` segment the runner is in, with the segments before it. */
  segment: ShellToken[];
  segmentIndex: number;
  /** `npm test` without `--`: the runner's arguments must be added after a `--`. */
  needsDoubleDash: boolean;
  /** The script runner (`npm test`): the kind comes from the package's `test` script. */
  viaScript: boolean;
  tokens: ShellToken[];
}

const base = (w: string) => w.slice(w.lastIndexOf('/') + 1);

function words(segment: readonly ShellToken[]): ShellWord[] {
  return segment.filter((t): t is ShellWord => t.kind === 'word');
}

/** The runner word's index and kind in a segment's words (after its env assignments). */
function findRunner(ws: readonly ShellWord[], from: number): { kind: Exclude<RunnerKind, 'other'> | 'script'; at: number; manager?: string } | undefined {
  for (let i = from; i < ws.length; i++) {
    const v = ws[i]!.value;
    const b = base(v);
    if (b === 'pytest' || b === 'py.test') return { kind: 'pytest', at: i };
    if (v === 'pytest' && ws[i - 1]?.value === '-m') return { kind: 'pytest', at: i };
    if (b === 'vitest') return { kind: 'vitest', at: i };
    if (b === 'jest') return { kind: 'jest', at: i };
    if (b === 'go' && ws[i + 1]?.value === 'test') return { kind: 'go', at: i + 1 };
    if (b === 'node' && ws.slice(i + 1).some((w) => w.value === '--test')) return { kind: 'node-test', at: i };
    if (SCRIPT_RUNNERS.has(b)) {
      const next = ws[i + 1]?.value;
      // `bun test` is bun's own runner, not the package's script.
      if ((next === 'test' || next === 't') && b !== 'bun') return { kind: 'script', at: i + 1, manager: b };
      if ((next === 'run' || next === 'run-script') && ws[i + 2]?.value === 'test') return { kind: 'script', at: i + 2, manager: b };
    }
  }
  return undefined;
}

/**
 * The runner in a command's last `&&` segment. `scriptKind` is the kind of the package's `test` script, for `npm test`
 * (undefined: such a command is not read).
 *
 * @example
 * const inv = readInvocation('PYTHONPATH=src python3 -m pytest -q tests', 'pytest');
 * inv?.positionals.map((w) => w.value); // ['tests']
 */
export function readInvocation(command: string, scriptKind?: RunnerKind): RunnerInvocation | undefined {
  const tokens = shellTokens(command);
  if (!tokens) return undefined;
  const segments = andSegments(tokens);
  const segmentIndex = segments.length - 1;
  const segment = segments[segmentIndex]!;
  const ws = words(segment);
  let first = 0;
  while (first < ws.length && isAssignment(ws[first]!)) first++;
  const assignments = ws.slice(0, first);
  const found = findRunner(ws, first);
  if (!found) return undefined;
  let kind: Exclude<RunnerKind, 'other'>;
  let at = found.at;
  let needsDoubleDash = false;
  const viaScript = found.kind === 'script';
  if (found.kind === 'script') {
    if (!scriptKind || scriptKind === 'other') return undefined;
    kind = scriptKind;
    const dash = ws.findIndex((w, i) => i > at && w.value === '--');
    if (dash >= 0) at = dash;
    else if (!NEEDS_DOUBLE_DASH.has(found.manager ?? 'npm')) {
      // The words after the script name are already the runner's.
    } else {
      // Words after `npm test` are npm's own: the runner takes none until a `--` is added.
      needsDoubleDash = true;
      at = ws.length - 1;
    }
  } else kind = found.kind;
  const runnerWord = ws[at]!;
  let rest = needsDoubleDash ? [] : ws.slice(at + 1);
  let subcommand: ShellWord | undefined;
  if (kind === 'vitest' && !viaScript && rest[0] && /^(run|watch|dev|related|bench|list)$/.test(rest[0].value)) {
    subcommand = rest[0];
    rest = rest.slice(1);
  }
  const valueOptions = VALUE_OPTIONS[kind];
  const options: ShellWord[] = [];
  const positionals: ShellWord[] = [];
  let endOfOptions = false;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (kind === 'go' && (w.value === '-args' || w.value === '--args')) break;
    if (endOfOptions) {
      positionals.push(w);
      continue;
    }
    if (w.value === '--') {
      endOfOptions = true;
      options.push(w);
      continue;
    }
    if (w.value.startsWith('-') && w.value !== '-') {
      options.push(w);
      if (!w.value.includes('=') && valueOptions.has(w.value) && rest[i + 1]) options.push(rest[++i]!);
      continue;
    }
    positionals.push(w);
  }
  return { kind, runnerWord, ...(subcommand ? { subcommand } : {}), options, positionals, assignments, segment, segmentIndex, needsDoubleDash, viaScript, tokens };
}

/**
 * The runner kind a command runs (`other` when none is recognised). `scriptKind` stands for the package's `test`
 * script when the command is `npm test`.
 *
 * @example
 * inferRunnerKind('cd web && npx vitest run'); // 'vitest'
 */
export function inferRunnerKind(command: string, scriptKind?: RunnerKind): RunnerKind {
  const inv = readInvocation(command, scriptKind);
  if (inv) return inv.kind;
  // A command this reader refuses (a pipe, `;`) may still name its runner plainly.
  if (/(^|[\s/])(pytest|py\.test)(\s|$)/.test(command)) return 'pytest';
  if (/(^|[\s/])vitest(\s|$)/.test(command)) return 'vitest';
  if (/(^|[\s/])jest(\s|$)/.test(command)) return 'jest';
  if (/(^|[\s/])node\s.*--test(\s|=|$)/.test(command)) return 'node-test';
  if (/(^|\s)go\s+test(\s|$)/.test(command)) return 'go';
  return 'other';
}
