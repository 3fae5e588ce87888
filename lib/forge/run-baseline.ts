/**
 * The baseline: the suite run k times on the untouched repository, each in a fresh sandbox, with per-test outcomes
 * from the reports. A test that failed, went missing or changed outcome in any run is flaky and takes no part in
 * certification; only tests that passed in every run can become failToPass or passToPass.
 */
import type { BlobsPort } from '../ports/blobs.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { FlywheelError } from '../errors.ts';
import { runSetup, runSuite } from './run-suite.ts';
import { fileFromId, testFileMap } from './test-files-of.ts';
import type { Baseline, RunnableForgeSpec, RunOutcome } from './schemas.ts';

export interface RunBaselineInput {
  provider: SandboxProvider;
  /** The forge's work repository and the commit to run. */
  sourceDir: string;
  commit: string;
  spec: RunnableForgeSpec;
  blobs?: BlobsPort;
  /** Blob key prefix for the run logs (`<prefix>/run-<i>.log`). */
  logPrefix?: string;
}

/** The names of the forge's errors, as a log query (or a state machine) spells them. */
export const ForgeErrorNames = {
  baseline: 'Flywheel.ForgeBaselineError',
} as const;

/** The suite could not be run at all on the untouched repository: nothing can be certified. */
export class BaselineError extends FlywheelError {
  constructor(message: string) {
    super(ForgeErrorNames.baseline, message);
  }
}

/** Sandbox limits the forge runs suites under. */
export function forgeLimits(spec: Pick<RunnableForgeSpec, 'testTimeoutSeconds'>): { commandTimeoutMs: number; outputBytes: number } {
  return { commandTimeoutMs: spec.testTimeoutSeconds * 1000, outputBytes: 16 * 1024 * 1024 };
}

/**
 * @example
 * const baseline = await runBaseline({ provider, sourceDir: work.gitDir, commit: work.baseCommit, spec, blobs });
 * console.log(baseline.stable.length, 'stable tests;', baseline.flaky, 'flaky');
 */
export async function runBaseline(input: RunBaselineInput): Promise<Baseline & { ids: Record<string, string> }> {
  const { spec } = input;
  const outcomes = new Map<string, RunOutcome[]>();
  const ids: Record<string, string> = {};
  const durationsMs: number[] = [];
  const logKeys: string[] = [];
  let collected = 0;
  const testFiles: Record<string, string> = {};
  for (let i = 0; i < spec.k; i++) {
    const session = await input.provider.open({
      sourceDir: input.sourceDir,
      baseCommit: input.commit,
      mode: 'strict',
      networkAllowList: spec.networkAllowList,
      limits: forgeLimits(spec),
      env: spec.env,
    });
    try {
      const setupError = await runSetup(session, spec.setupCommand, spec.testTimeoutSeconds * 1000);
      if (setupError) throw new BaselineError(`baseline run ${i + 1}: ${setupError}`);
      const run = await runSuite(session, { command: spec.testCommand, timeoutMs: spec.testTimeoutSeconds * 1000, reportGlobs: spec.reportGlobs, label: `baseline run ${i + 1}` });
      durationsMs.push(run.durationMs);
      if (input.blobs && input.logPrefix) {
        const key = `${input.logPrefix}/run-${i + 1}.log`;
        await input.blobs.put(key, run.log, { contentType: 'text/plain; charset=utf-8' });
        logKeys.push(key);
      }
      if (run.tests.size === 0) throw new BaselineError(`baseline run ${i + 1}: the test command reported no tests (exit ${run.exitCode}); is the report written where the harness reads it?\n${run.log.slice(-2000)}`);
      collected = Math.max(collected, run.tests.size);
      for (const [key, file] of testFileMap(run.files, run.workdir)) testFiles[key] ??= file;
      for (const [key, t] of run.tests) {
        ids[key] ??= t.id;
        const list = outcomes.get(key) ?? Array.from({ length: i }, () => 'missing' as const);
        list.push(t.outcome);
        outcomes.set(key, list);
      }
      for (const [key, list] of outcomes) if (!run.tests.has(key)) list.push('missing');
    } finally {
      await session.close();
    }
  }
  const stable: string[] = [];
  const flaky: string[] = [];
  const skipped: string[] = [];
  for (const [key, list] of outcomes) {
    if (list.every((o) => o === 'passed')) stable.push(key);
    else if (list.every((o) => o === 'skipped')) skipped.push(key);
    else flaky.push(key);
  }
  if (stable.length === 0) throw new BaselineError(`no test passed in every one of the ${spec.k} baseline runs`);
  const byKey = Object.fromEntries([...outcomes].map(([k, v]) => [ids[k]!, v]));
  const collectedFiles = new Set(Object.values(testFiles));
  for (const id of Object.values(ids)) {
    const file = fileFromId(id);
    if (file) collectedFiles.add(file);
  }
  return {
    runs: spec.k,
    outcomes: byKey,
    stable: stable.map((k) => ids[k]!),
    flaky: flaky.map((k) => ids[k]!),
    skipped: skipped.map((k) => ids[k]!),
    collected,
    durationsMs,
    logKeys,
    testFiles,
    collectedFiles: [...collectedFiles].sort(),
    ids,
  };
}
