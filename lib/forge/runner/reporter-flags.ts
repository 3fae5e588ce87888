/**
 * Reporter flags a test command needs so the harness can read per-test results: vitest and jest write JSON into the
 * run's report directory, node's runner JUnit, go test `-json` on stdout. pytest needs nothing (the grading prelude
 * asks it for JUnit through `PYTEST_ADDOPTS`). A command that already chose a readable reporter is left alone.
 */
import type { RunnerKind } from '../schemas.ts';
import { readInvocation, type RunnerInvocation } from './runner-invocation.ts';

/** The flags added per runner (`$FLYWHEEL_REPORT_DIR` is the grading prelude's per-run report directory). */
export const REPORTER_FLAGS: Partial<Record<RunnerKind, string>> = {
  vitest: '--reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"',
  jest: '--json --outputFile="$FLYWHEEL_REPORT_DIR/jest.json"',
  'node-test': '--test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml"',
  go: '-json',
};

/** Values given to an option, in `--opt=value` or `--opt value` form. */
function optionValues(inv: RunnerInvocation | undefined, name: string): string[] {
  if (!inv) return [];
  const out: string[] = [];
  inv.options.forEach((w, i) => {
    if (w.value === name) out.push(inv.options[i + 1]?.value ?? '');
    else if (w.value.startsWith(`${name}=`)) out.push(w.value.slice(name.length + 1));
  });
  return out;
}

function hasOption(inv: RunnerInvocation | undefined, ...names: string[]): boolean {
  return !!inv?.options.some((w) => names.some((n) => w.value === n || w.value.startsWith(`${n}=`)));
}

/** Why the command already reports readably, or undefined when the flags are needed. */
function readableAlready(kind: RunnerKind, invs: Array<RunnerInvocation | undefined>): string | undefined {
  const reporters = invs.flatMap((i) => [...optionValues(i, '--reporter'), ...optionValues(i, '--reporters'), ...optionValues(i, '--test-reporter')]);
  if (kind === 'vitest' && reporters.some((r) => r === 'json' || r === 'junit')) return 'it already asks vitest for a JSON or JUnit report';
  if (kind === 'jest' && (invs.some((i) => hasOption(i, '--json')) || reporters.some((r) => r.includes('junit')))) return 'it already asks jest for JSON or JUnit';
  if (kind === 'node-test' && reporters.length > 0) {
    return reporters.includes('junit') ? 'it already asks node for JUnit' : `it sets its own --test-reporter (${reporters.join(', ')}); add --test-reporter=junit with a destination in $FLYWHEEL_REPORT_DIR if results are not read`;
  }
  if (kind === 'go' && invs.some((i) => hasOption(i, '-json', '--json'))) return 'it already runs go test -json';
  return undefined;
}

/**
 * The command with the reporter flags its runner needs, and a note when something was added or could not be.
 * `scriptCommand` is the package's `test` script, for a command that runs it (`npm test`).
 *
 * @example
 * withReporterFlags('npx vitest run', 'vitest').command; // 'npx vitest run --reporter=json --outputFile="$FLYWHEEL_REPORT_DIR/vitest.json"'
 * withReporterFlags('npx vitest', 'vitest').command;     // 'npx vitest run --reporter=json …' (run once, not watch)
 */
export function withReporterFlags(command: string, kind: RunnerKind, scriptCommand?: string): { command: string; note?: string } {
  const flags = REPORTER_FLAGS[kind];
  if (!flags) return { command };
  const inv = readInvocation(command, kind);
  if (!inv || inv.kind !== kind) return { command, note: `could not find where ${kind} starts in the test command; no reporter flags added (per-test results may not be readable)` };
  const script = inv.viaScript && scriptCommand ? readInvocation(scriptCommand) : undefined;
  const already = readableAlready(kind, [inv, script]);
  if (already) return { command, ...(already.includes('add --test-reporter') ? { note: `test command kept as given: ${already}` } : {}) };
  let at: number;
  let text: string;
  if (inv.needsDoubleDash) {
    at = inv.runnerWord.end;
    text = ` -- ${flags}`;
  } else if (kind === 'vitest' && !inv.subcommand && !inv.viaScript && !hasOption(inv, '--run')) {
    // Bare `vitest` watches outside CI; `run` makes one pass whatever the environment.
    at = inv.runnerWord.end;
    text = ` run ${flags}`;
  } else if (kind === 'node-test') {
    at = inv.options.find((w) => w.value === '--test')?.end ?? inv.runnerWord.end;
    text = ` ${flags}`;
  } else {
    at = (inv.subcommand ?? inv.runnerWord).end;
    text = ` ${flags}`;
  }
  const out = command.slice(0, at) + text + command.slice(at);
  return { command: out, note: `reporter flags added so per-test results can be read: ${text.trim()}` };
}
