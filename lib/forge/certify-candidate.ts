/**
 * Certification of one candidate deletion. It becomes a task only if, each check in a fresh sandbox:
 * 1. its starting tree (edits applied, derived leftovers stripped, history-free) holds no removed line anywhere an
 *    agent in the strict sandbox could read (probes over every git object and every file);
 * 2. a fast first pass over the tests that touch the deleted code (where the runner takes file filters) fails at
 *    least one baseline-stable test — else nothing exercises it and it is skipped cheaply;
 * 3. the full suite still runs: no collection or compile crash (new erroring entries, stable tests gone missing),
 *    unless the strategy removes a file and the crash is that missing module;
 * 4. at least one stable test fails (failToPass), the other stable tests pass (passToPass); a test that went
 *    missing counts as failed, never passed; the do-nothing agent (the unchanged broken tree) fails the harness's
 *    verdict; flaky tests take no part;
 * 5. the oracle — the reference patch graded through the harness's own `gradeAttempt` — passes, k times (runs on a
 *    tree byte-identical to the baseline's are credited from the baseline's k runs).
 * Every outcome is returned with its reason, so the caller can record it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BlobsPort } from '../ports/blobs.ts';
import { decideVerdict } from '../harness/grading/decide-verdict.ts';
import { gradeAttempt } from '../harness/grading/grade-attempt.ts';
import { testIdKey } from '../harness/grading/test-id.ts';
import type { SandboxProvider } from '../harness/sandbox/sandbox.ts';
import { TASK_SCHEMA_VERSION, parseTask, type Task } from '../harness/task/task-schema.ts';
import { commitEdits, diffCommits, readTreeFile, writeTaskRepo, type FileEdit, type WorkRepo } from './forge-git.ts';
import { forgeTestRunner } from './forge-test-runner.ts';
import { probeLeaks, probeLines, removedLinesOfPatch } from './probe-leaks.ts';
import { forgeLimits } from './run-baseline.ts';
import { testFilesOf } from './test-files-of.ts';
import { fillFilter, runSetup, runSuite, type SuiteRun } from './run-suite.ts';
import type { CandidateProfile } from './candidate.ts';
import { probeEnvironmentLeaks, type ForgeEnvironmentRecord } from './environment/forge-environment.ts';
import { DEFAULT_FILTER_COMMANDS } from './runner/filter-commands.ts';
import type { Baseline, RejectionCode, RunnableForgeSpec } from './schemas.ts';

export { DEFAULT_FILTER_COMMANDS } from './runner/filter-commands.ts';

/** A candidate as certification sees it (built from the candidates module's `Candidate`). */
export interface ForgeCandidate {
  id: string;
  strategy: string;
  /** Source edits: new content, or null to delete the file. */
  edits: FileEdit[];
  symbols: string[];
  /** Static pre-filter: test files that reference the deleted code (for the fast first pass). */
  testFiles?: string[];
  /** Derived artefacts to delete from the task tree (caches, build output), from the leftovers module. */
  leftovers?: string[];
  /** Writes the task statement, given the failing tests; undefined gives the template below. */
  statement?: (context: { failToPass: string[]; removalPatch: string }) => Promise<string>;
  /**
   * The statement leak check: a removed line the text carries that the agent could not see anyway (signatures and doc
   * comments it is shown are not leaks); default: any probed removed line.
   */
  statementLeak?: (statement: string) => string | undefined;
  /** Scores the task with the quality rubric (stored on the task as `metadata.forge.quality`). */
  quality?: (context: { statement: string; failToPass: string[] }) => Promise<unknown>;
  /** Ranking facts from the candidates module (entry point, public or not, size, spans). */
  profile?: CandidateProfile;
}

export type CertifyOutcome =
  | { status: 'certified'; task: Task; artifacts: TaskArtifacts; failKey: string; timings: CertifyTimings }
  | { status: 'rejected' | 'skipped'; reason: RejectionCode; detail: string; failToPass?: string[]; log: string; timings: CertifyTimings }
  | { status: 'duplicate'; of: string; failToPass: string[]; log: string; timings: CertifyTimings };

type OutcomeBody = CertifyOutcome extends infer O ? (O extends CertifyOutcome ? Omit<O, 'timings'> : never) : never;

export interface TaskArtifacts {
  removalPatch: string;
  referencePatch: string;
  log: string;
  /** The task's starting repository (history-free), on disk: move it where the suite keeps repositories. */
  repoDir: string;
  repoCommit: string;
  leftovers: string[];
}

export interface CertifyTimings {
  firstPassMs: number;
  fullRunMs: number;
  oracleMs: number;
  totalMs: number;
}

export interface CertifyInput {
  provider: SandboxProvider;
  work: WorkRepo;
  spec: RunnableForgeSpec;
  baseline: Baseline;
  candidate: ForgeCandidate;
  /** The environment the run tests in (recorded on the task). */
  environment?: ForgeEnvironmentRecord;
  runId: string;
  /** Task id to give it when certified. */
  taskId: string;
  /** Where the task repository is written (a fresh folder). */
  scratchDir?: string;
  blobs?: BlobsPort;
  /** Returns the id of an already certified task breaking the same tests, if any (dedupe). */
  duplicateOf?: (failKey: string) => string | undefined;
}

export function filterCommandOf(spec: Pick<RunnableForgeSpec, 'runner'>): string | undefined {
  return spec.runner.filterCommand ?? DEFAULT_FILTER_COMMANDS[spec.runner.kind];
}

/** True for strategies that delete whole files (whose tests may then fail to import). */
export function isFileRemoval(strategy: string): boolean {
  return /file/i.test(strategy);
}

const MISSING_MODULE = /ModuleNotFoundError|No module named|ImportError|Cannot find module|ERR_MODULE_NOT_FOUND|Failed to resolve import|Failed to load url|cannot find package/i;

/** The template statement: the missing capability by name and the tests that pin it, no code. */
export function templateStatement(candidate: Pick<ForgeCandidate, 'symbols' | 'edits' | 'strategy'>, failToPass: string[]): string {
  const what = candidate.symbols.length > 0 ? candidate.symbols.map((s) => `\`${s}\``).join(', ') : candidate.edits.map((e) => `\`${e.path}\``).join(', ');
  const files = [...new Set(candidate.edits.map((e) => e.path))].map((p) => `\`${p}\``).join(', ');
  const shown = failToPass.slice(0, 20).map((t) => `- ${t}`);
  return [
    `The implementation of ${what} is missing from this repository (${files}).`,
    'Implement it so that the behaviour the existing tests expect is back, without changing the tests.',
    '',
    'These tests fail now and must pass:',
    ...shown,
    ...(failToPass.length > shown.length ? [`- … and ${failToPass.length - shown.length} more`] : []),
    '',
    'Every other test must keep passing.',
  ].join('\n');
}

function keysOf(ids: readonly string[]): Set<string> {
  return new Set(ids.map(testIdKey));
}

interface Classified {
  failToPass: string[];
  passToPass: string[];
  crash?: string;
  flakyOnlyChanged: boolean;
}

/** Compares a run on the broken tree with the baseline. */
export function classifyRun(run: SuiteRun, baseline: Baseline, strategy: string, removedFiles: readonly string[] = []): Classified {
  const stable = baseline.stable;
  const known = new Set([...Object.keys(baseline.outcomes)].map(testIdKey));
  const flakyKeys = keysOf(baseline.flaky);
  const failToPass: string[] = [];
  const passToPass: string[] = [];
  const missing: string[] = [];
  for (const id of stable) {
    const t = run.tests.get(testIdKey(id));
    if (!t) missing.push(id);
    if (t?.outcome === 'passed') passToPass.push(id);
    else failToPass.push(id);
  }
  const extras = [...run.tests.entries()].filter(([key, t]) => !known.has(key) && (t.outcome === 'error' || t.outcome === 'failed'));
  let crash: string | undefined;
  if (run.tests.size === 0) crash = `suite-does-not-run: the run reported no tests (exit ${run.exitCode}${run.timedOut ? ', timed out' : ''})`;
  else if (extras.length > 0 || missing.length > 0) {
    const messages = [...extras.map(([, t]) => `${t.id}: ${t.message ?? t.outcome}`), ...(missing.length ? [`${missing.length} stable test(s) not collected, e.g. ${missing[0]}`] : [])];
    const moduleGone = isFileRemoval(strategy) && (extras.every(([, t]) => MISSING_MODULE.test(t.message ?? '')) || namesRemovedModule(run.log, removedFiles));
    const cause = firstErrorLine(run.log);
    if (!moduleGone) crash = `collection-crash: ${messages.slice(0, 3).join('; ')}${cause ? ` — ${cause}` : ''}`;
  }
  const flakyOnlyChanged = failToPass.length === 0 && [...run.tests.entries()].some(([k, t]) => flakyKeys.has(k) && t.outcome !== 'passed');
  return { failToPass, passToPass, ...(crash ? { crash } : {}), flakyOnlyChanged };
}

/** True when the output says a module is missing and names one of the removed files (by stem). */
export function namesRemovedModule(log: string, removedFiles: readonly string[]): boolean {
  const stems = removedFiles.map((f) => {
    const base = f.slice(f.lastIndexOf('/') + 1);
    return base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
  });
  return log.split('\n').some((line) => MISSING_MODULE.test(line) && stems.some((s) => s !== '' && line.includes(s)));
}

/** The first line of a run's output that names an error (`ImportError: cannot import name …`). */
export function firstErrorLine(log: string): string | undefined {
  const line = log.split('\n').find((l) => /^(?:E\s+)?\w*(?:Error|Exception)\b[:\s]/.test(l.trim()) || /\bSyntaxError\b|\berror TS\d+/.test(l));
  return line?.trim().replace(/^E\s+/, '').slice(0, 300);
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'x';
}

/** A task id from the repository name, strategy and symbols: stable across runs of the same repository. */
export function forgeTaskId(repoName: string, candidate: Pick<ForgeCandidate, 'id' | 'strategy' | 'symbols'>): string {
  const what = candidate.symbols[0] ?? candidate.id;
  return `${slug(repoName)}.${slug(candidate.strategy)}.${slug(what)}-${slug(candidate.id).slice(-8)}`;
}

/**
 * @example
 * const outcome = await certifyCandidate({ provider, work, spec, baseline, candidate, runId, taskId });
 * if (outcome.status === 'certified') tasks.push(outcome.task);
 */
export async function certifyCandidate(input: CertifyInput): Promise<CertifyOutcome> {
  const { provider, work, spec, baseline, candidate } = input;
  const t0 = Date.now();
  const timings: CertifyTimings = { firstPassMs: 0, fullRunMs: 0, oracleMs: 0, totalMs: 0 };
  const logs: string[] = [`# forge certification of ${candidate.id} (${candidate.strategy}: ${candidate.symbols.join(', ') || candidate.edits.map((e) => e.path).join(', ')})`];
  const done = (o: OutcomeBody): CertifyOutcome => {
    timings.totalMs = Date.now() - t0;
    return { ...o, timings } as CertifyOutcome;
  };
  const reject = (status: 'rejected' | 'skipped', reason: RejectionCode, detail: string, failToPass?: string[]) =>
    done({ status, reason, detail, ...(failToPass ? { failToPass } : {}), log: logs.join('\n') });

  // The static pre-filter found no test that references the deleted code: skipped without running anything.
  if (candidate.testFiles !== undefined && candidate.testFiles.length === 0 && spec.staticSkip) {
    return reject('skipped', 'not-exercised', 'no test file references the deleted code (static pre-filter)');
  }
  const leftovers = candidate.leftovers ?? [];
  const leftoverEdits: FileEdit[] = [];
  for (const path of leftovers) if (!candidate.edits.some((e) => e.path === path)) leftoverEdits.push({ path, content: null });
  let broken: { commit: string; tree: string };
  try {
    broken = await commitEdits(work.gitDir, work.baseCommit, [...candidate.edits, ...leftoverEdits], `forge: ${candidate.id}\n`);
  } catch (error) {
    return reject('rejected', 'apply-failed', (error as Error).message);
  }
  if (broken.tree === work.baseTree) return reject('rejected', 'apply-failed', 'the edits change nothing');
  const removalPatch = await diffCommits(work.gitDir, work.baseCommit, broken.commit);
  // The reference patch puts back the original source only (stripped leftovers stay stripped).
  const originals: FileEdit[] = [];
  for (const e of candidate.edits) originals.push({ path: e.path, content: (await readTreeFile(work.gitDir, work.baseCommit, e.path)) ?? null });
  const oracle = await commitEdits(work.gitDir, broken.commit, originals, `forge oracle: ${candidate.id}\n`);
  const referencePatch = await diffCommits(work.gitDir, broken.commit, oracle.commit);
  const removed = removedLinesOfPatch(diffFor(removalPatch, candidate.edits.map((e) => e.path)));
  const timeoutMs = spec.testTimeoutSeconds * 1000;

  // The task's starting repository: the broken tree alone, one synthetic commit.
  const scratch = input.scratchDir ?? (await mkdtemp(join(tmpdir(), 'fw-forge-task-')));
  const repoDir = join(scratch, 'repo');
  const repoCommit = await writeTaskRepo(work.gitDir, broken.tree, repoDir);
  let keepRepo = false;
  try {
    const session = await provider.open({ sourceDir: repoDir, baseCommit: repoCommit, mode: 'strict', networkAllowList: spec.networkAllowList, limits: forgeLimits(spec), env: spec.env });
    let full: SuiteRun;
    try {
      const probe = await probeLeaks(session, removed);
      logs.push(`leak probe: ${probe.ok ? 'clean' : probe.problems.join('; ')} (${probeLines(removed).length} removed lines probed, ${probe.commits} commit(s))`);
      if (!probe.ok) return reject('rejected', 'leak-found', probe.problems.join('; '));
      const reachable = await probeEnvironmentLeaks(session, removed);
      logs.push(`environment probe: ${reachable.ok ? 'clean' : [...reachable.problems, ...reachable.found].join('; ')}`);
      if (!reachable.ok) return reject('rejected', 'answer-reachable', [...reachable.found, ...reachable.problems].slice(0, 5).join('; '));
      const setupError = await runSetup(session, spec.setupCommand, timeoutMs);
      if (setupError) return reject('rejected', 'suite-does-not-run', setupError);
      const filter = filterCommandOf(spec);
      const testFiles = candidate.testFiles ?? [];
      if (filter && testFiles.length > 0) {
        const first = await runSuite(session, { command: fillFilter(filter, testFiles), timeoutMs, reportGlobs: spec.reportGlobs, label: 'first pass (tests touching the deleted code)' });
        timings.firstPassMs = first.durationMs;
        logs.push(first.log);
        // Skipped only when the first pass shows nothing broken: every test it reported (flaky ones aside) passed.
        const flakyKeys = keysOf(baseline.flaky);
        const broken = [...first.tests.entries()].filter(([k, t]) => !flakyKeys.has(k) && t.outcome !== 'passed' && t.outcome !== 'skipped');
        if (broken.length === 0 && first.tests.size > 0) return reject('skipped', 'no-test-fails', `first pass over ${testFiles.length} test file(s): every test they hold still passes`);
      }
      full = await runSuite(session, { command: spec.testCommand, timeoutMs, reportGlobs: spec.reportGlobs, label: 'full suite on the broken tree (the do-nothing agent)' });
      timings.fullRunMs = full.durationMs;
      logs.push(full.log);
    } finally {
      await session.close();
    }

    const c = classifyRun(full, baseline, candidate.strategy, candidate.edits.filter((e) => e.content === null).map((e) => e.path));
    if (c.crash) {
      const code = c.crash.startsWith('suite-does-not-run') ? 'suite-does-not-run' : 'collection-crash';
      return reject('rejected', code, c.crash.slice(c.crash.indexOf(':') + 2), c.failToPass);
    }
    if (c.failToPass.length === 0) {
      if (c.flakyOnlyChanged) return reject('rejected', 'only-flaky-tests-fail', 'only tests the baseline found flaky changed outcome');
      return reject('skipped', 'no-test-fails', 'no stable test exercises the deleted code (every one still passes)');
    }
    if (c.passToPass.length === 0) return reject('rejected', 'suite-does-not-run', `every stable test fails (${c.failToPass.length}): the deletion breaks the whole suite`, c.failToPass);
    const failKey = [...keysOf(c.failToPass)].sort().join('\n');
    const dup = input.duplicateOf?.(failKey);
    if (dup) return done({ status: 'duplicate', of: dup, failToPass: c.failToPass, log: logs.join('\n') });

    const doNothing = decideVerdict({ failToPass: c.failToPass, passToPass: c.passToPass, reports: full.reports, expectedCollected: baseline.collected });
    logs.push(`do-nothing agent: ${doNothing.passed ? 'PASSES' : `fails (${doNothing.reasons.length} reasons, e.g. ${doNothing.reasons[0]})`}`);
    if (doNothing.passed) return reject('rejected', 'do-nothing-passes', 'the unchanged broken tree passes the verdict', c.failToPass);

    let instruction: string;
    try {
      instruction = candidate.statement ? await candidate.statement({ failToPass: c.failToPass, removalPatch }) : templateStatement(candidate, c.failToPass);
    } catch (error) {
      logs.push(`statement writer failed (${(error as Error).message}); template used`);
      instruction = templateStatement(candidate, c.failToPass);
    }
    const leakedInStatement = candidate.statementLeak ? candidate.statementLeak(instruction) : probeLines(removed).find((line) => instruction.includes(line));
    if (leakedInStatement) return reject('rejected', 'statement-leaks', `the statement carries a removed line: ${leakedInStatement}`, c.failToPass);
    let quality: unknown;
    if (candidate.quality) {
      try {
        quality = await candidate.quality({ statement: instruction, failToPass: c.failToPass });
      } catch (error) {
        quality = { score: null, reason: `quality rubric failed: ${(error as Error).message}` };
      }
    }

    const task = parseTask({
      schemaVersion: TASK_SCHEMA_VERSION,
      id: input.taskId,
      suite: spec.suite,
      split: spec.split,
      visibility: spec.visibility,
      repo: { kind: 'git', url: repoDir, commit: repoCommit },
      instruction,
      ...(spec.setupCommand ? { setupCommand: spec.setupCommand } : {}),
      testCommand: spec.testCommand,
      failToPass: c.failToPass,
      passToPass: c.passToPass,
      testFiles: candidate.testFiles ?? [],
      goldPatch: referencePatch,
      networkAllowList: spec.networkAllowList,
      origin: { kind: 'forge', ref: `${work.origin}@${work.baseCommit}` },
      metadata: {
        expectedTestCount: baseline.collected,
        ...(spec.reportGlobs.length ? { reportGlobs: spec.reportGlobs } : {}),
        forge: {
          runId: input.runId,
          candidateId: candidate.id,
          strategy: candidate.strategy,
          symbols: candidate.symbols,
          files: candidate.edits.map((e) => e.path),
          leftovers,
          flaky: baseline.flaky,
          sourceCommit: work.baseCommit,
          brokenTree: broken.tree,
          status: 'active',
          ...(input.environment ? { environment: input.environment } : {}),
          ...(candidate.profile ? { entryPoint: candidate.profile.entryPoint } : {}),
          ...(quality !== undefined ? { quality } : {}),
        },
      },
    });

    // The oracle, through the harness's grading: the reference patch on the task's own repository, k times.
    const oracleStart = Date.now();
    const runTests = forgeTestRunner(provider, { ...(spec.setupCommand ? { setupCommand: spec.setupCommand } : {}), networkAllowList: spec.networkAllowList, env: spec.env });
    const identical = oracle.tree === work.baseTree;
    const filter = filterCommandOf(spec);
    const failFiles = testFilesOf(full.files, c.failToPass, full.workdir, baseline.testFiles);
    // A tree byte-identical to the baseline's already passed the whole suite k times; what is left to prove is that
    // the reference patch applies to the shipped repository and brings the failing tests back, through grading —
    // on their files only when the runner takes a filter.
    const fast = identical && filter !== undefined && failFiles !== undefined && failFiles.length > 0;
    const oracleTask: Task = fast ? { ...task, testCommand: fillFilter(filter, failFiles), passToPass: [], metadata: { ...task.metadata, expectedTestCount: 0 } } : task;
    const runs = identical && !fast ? 1 : spec.k;
    for (let i = 0; i < runs; i++) {
      // strict: false — the reference patch is trusted, and in a repository that is itself a pytest plugin its source
      // legitimately adds hooks and `_pytest` imports, which strict grading would fail as runner patching. Lenient
      // grading still records those flags, and the result stream's own tamper checks still fail it.
      const grade = await gradeAttempt({ task: oracleTask, sourceDir: repoDir, baseCommit: repoCommit, diff: referencePatch, attemptId: `forge-oracle-${randomUUID()}`, runTests, timeoutMs, strict: false });
      logs.push(`oracle run ${i + 1}${fast ? ` (failing tests' files: ${failFiles.join(' ')})` : ' (full suite)'}: ${grade.passed ? 'passed' : `FAILED: ${grade.reasons.slice(0, 3).join('; ')}`} (${grade.durationMs} ms)`);
      if (!grade.passed) {
        timings.oracleMs = Date.now() - oracleStart;
        return reject('rejected', 'oracle-failed', `the reference patch fails grading on run ${i + 1}: ${grade.reasons.slice(0, 3).join('; ')}`, c.failToPass);
      }
    }
    if (identical) logs.push(`oracle, whole suite: the oracle tree ${oracle.tree} is byte-identical to the baseline tree, whose ${baseline.runs} full runs passed every one of these tests`);
    timings.oracleMs = Date.now() - oracleStart;
    keepRepo = true;
    return done({
      status: 'certified',
      task,
      failKey,
      artifacts: { removalPatch, referencePatch, log: logs.join('\n'), repoDir, repoCommit, leftovers },
    });
  } catch (error) {
    logs.push(`error: ${(error as Error).stack ?? String(error)}`);
    return reject('rejected', 'infrastructure-error', (error as Error).message);
  } finally {
    if (!keepRepo) await rm(input.scratchDir ? repoDir : scratch, { recursive: true, force: true });
  }
}

/** The part of a patch that touches the given paths (the source edits, not stripped leftovers). */
function diffFor(patch: string, paths: readonly string[]): string {
  const chunks = patch.split(/^(?=diff --git )/m);
  return chunks.filter((c) => paths.some((p) => c.startsWith(`diff --git a/${p} `))).join('');
}
