/**
 * How a forge run tests the repository: the test command (given, or derived from the repository), the runner kind,
 * the per-file filter the fast first pass uses (derived from the test command, so it inherits its environment and
 * working directory) and the environment every sandboxed command gets.
 *
 * @example
 * const runner = await resolveRunner(work, spec);
 * const runnable = runnableSpec(spec, runner); // testCommand, runner.filterCommand, env filled in
 */
import { ValidationError } from '../../errors.ts';
import type { WorkRepo } from '../forge-git.ts';
import type { ForgeSpec, RunnableForgeSpec, RunnerKind } from '../schemas.ts';
import { DEFAULT_FILTER_COMMANDS } from './filter-commands.ts';

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
}

export async function resolveRunner(_work: WorkRepo, spec: ForgeSpec): Promise<ResolvedRunner> {
  if (!spec.testCommand) throw new ValidationError('forge spec is not valid: testCommand: required', [{ path: 'testCommand', message: 'required' }]);
  const kind = spec.runner.kind;
  const filterCommand = spec.runner.filterCommand ?? DEFAULT_FILTER_COMMANDS[kind];
  return { testCommand: spec.testCommand, kind, ...(filterCommand ? { filterCommand } : {}), env: {}, notes: [] };
}

/** The spec with the resolved runner filled in. */
export function runnableSpec(spec: ForgeSpec, runner: ResolvedRunner): RunnableForgeSpec {
  return {
    ...spec,
    testCommand: runner.testCommand,
    runner: { kind: runner.kind, ...(runner.filterCommand ? { filterCommand: runner.filterCommand } : {}) },
    env: { ...runner.env, ...spec.env },
  };
}
