/**
 * Certification of one candidate deletion. It becomes a task only if, each check in a fresh sandbox:
 * 1. its starting tree (edits applied, derived leftovers stripped, history-free) holds no removed line anywhere an
 *    agent in the strict sandbox could read (probes over every git object and every file);
 * 2. a fast first pass over the tests that touch the deleted code and that the runner itself collected (where the
 *    runner takes file filters) fails at least one baseline-stable test — else nothing exercises it and it is
 *    skipped cheaply (without any run when none of those test files is one the runner collects);
 * 3. the full suite still runs: no collection or compile crash (new erroring entries, stable tests gone missing),
 *    unless the strategy removes a file and the crash is that missing module; and it does not fail more than
 *    `maxFailingShare` of a suite of at least `SHARE_CAP_MIN_TESTS` stable tests (a near import error, not a feature);
 * 4. at least one stable test fails (failToPass), the other stable tests pass (passToPass); a test that went
 *    missing counts as failed, never passed; the failing tests' files run `brokenRuns - 1` more times, each in a
 *    fresh sandbox, and only tests failing every time stay failToPass (the others are dropped and counted); the
 *    do-nothing agent (the unchanged broken tree) fails the harness's verdict; flaky tests take no part;
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
import { forgeTemplateStatement } from './statement/template-statement.ts';
import { probeEnvironmentLeaks, type ForgeEnvironmentRecord } from './environment/forge-environment.ts';
import { SHARE_CAP_MIN_TESTS, type Baseline, type RejectionCode, type RunnableForgeSpec } from './schemas.ts';


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

/** What certification learnt of the broken tree, whatever the verdict (recorded on the candidate). */
export interface CertifyFacts {
  /** Share of the baseline's stable tests the full run on the broken tree failed (set once that run happened). */
  failingShare?: number;
  /** Tests that failed on the broken tree in some runs only: neither failToPass nor passToPass (set once reruns happened). */
  flakyDropped?: string[];
}

export type CertifyOutcome =
  | ({ status: 'certified'; task: Task; artifacts: TaskArtifacts; failKey: string; timings: CertifyTimings } & CertifyFacts)
  | ({ status: 'rejected' | 'skipped'; reason: RejectionCode; detail: string; failToPass?: string[]; log: string; timings: CertifyTimings } & CertifyFacts)
  | ({ status: 'duplicate'; of: string; failToPass: string[]; log: string; timings: CertifyTimings } & CertifyFacts);

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
  /** The broken tree's extra runs (the failing tests' files, `brokenRuns - 1` times), sandbox and setup included. */
  rerunMs?: number;
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

/** The first pass's filter: the spec's, as `resolveRunner` derived it from the test command (never a default without its environment). */
export function filterCommandOf(spec: Pick<RunnableForgeSpec, 'runner'>): string | undefined {
  return spec.runner.filterCommand;
}

/** True for strategies that delete whole files (whose tests may then fail to import). */
export function isFileRemoval(strategy: string): boolean {
  return /file/i.test(strategy);
}

const MISSING_MODULE = /ModuleNotFoundError|No module named|ImportError|Cannot find module|ERR_MODULE_NOT_FOUND|Failed to resolve import|Failed to load url|cannot find package/i;

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

/**
 * The candidate's test files that the runner itself collected in the baseline (a file some id or report names):
 * typing stubs, helpers and data under `tests/` are not test files. Paths match exactly, or when one ends with the
 * other (a runner started in a package folder reports paths relative to it).
 *
 * @example
 * collectedTestFiles(['tests/test_a.py', 'tests/typing_stub.py'], ['tests/test_a.py']); // ['tests/test_a.py']
 */
export function collectedTestFiles(testFiles: readonly string[], collectedFiles: readonly string[]): string[] {
  const collected = new Set(collectedFiles);
  return testFiles.filter((f) => collected.has(f) || collectedFiles.some((c) => f.endsWith(`/${c}`) || c.endsWith(`/${f}`)));
}

/** How much of the suite a broken tree fails, and the message most of those failures share. */
export interface SuiteBreakage {
  /** Failing stable tests over all stable tests. */
  share: number;
  /** The commonest first line of the failures' messages (or of the log), and how many failures carry it. */
  dominant?: { message: string; count: number };
}

/**
 * @example
 * const { share, dominant } = suiteBreakage(run, baseline, c.failToPass); // { share: 0.9, dominant: { message: "ImportError: …", count: 18 } }
 */
export function suiteBreakage(run: SuiteRun, baseline: Pick<Baseline, 'stable'>, failToPass: readonly string[]): SuiteBreakage {
  const share = baseline.stable.length === 0 ? 0 : failToPass.length / baseline.stable.length;
  const counts = new Map<string, number>();
  for (const id of failToPass) {
    const t = run.tests.get(testIdKey(id));
    const message = t === undefined ? 'not reported (the test went missing)' : (t.message ?? '').split('\n').map((l) => l.trim()).find((l) => l !== '');
    if (message) counts.set(message.slice(0, 300), (counts.get(message.slice(0, 300)) ?? 0) + 1);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1])[0];
  if (top) return { share, dominant: { message: top[0], count: top[1] } };
  const line = firstErrorLine(run.log);
  return line ? { share, dominant: { message: line, count: failToPass.length } } : { share };
}

/**
 * Keeps as failToPass only the tests that failed in every run of the broken tree (a test missing from a rerun that
 * ran its file counts as failed); tests that passed in some rerun, and passToPass tests that failed in one, are
 * dropped as flaky on the broken tree.
 *
 * @example
 * const kept = stableBrokenOutcome(c.failToPass, c.passToPass, [rerun1, rerun2]);
 * kept.flakyDropped; // ['tests/test_gc.py::test_finalizer']
 */
export function stableBrokenOutcome(failToPass: readonly string[], passToPass: readonly string[], reruns: readonly SuiteRun[]): { failToPass: string[]; passToPass: string[]; flakyDropped: string[] } {
  const passedAgain = (id: string) => reruns.some((r) => r.tests.get(testIdKey(id))?.outcome === 'passed');
  const failedOnce = (id: string) => reruns.some((r) => {
    const o = r.tests.get(testIdKey(id))?.outcome;
    return o === 'failed' || o === 'error';
  });
  const kept = failToPass.filter((id) => !passedAgain(id));
  const keptPass = passToPass.filter((id) => !failedOnce(id));
  const flakyDropped = [...failToPass.filter(passedAgain), ...passToPass.filter(failedOnce)];
  return { failToPass: kept, passToPass: keptPass, flakyDropped };
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'x';
}

/**
 * A task id from the repository name, strategy and entry point (the symbol a user calls; else the first symbol):
 * stable across runs of the same repository.
 *
 * @example
 * forgeTaskId('ufo', { id: 'group-src-url.ts-withHttp-1a2b3c4d5e', strategy: 'function-group', symbols: ['src/url.ts#withProtocol', 'src/url.ts#withHttp'], profile: { entryPoint: 'src/url.ts#withHttp' } });
 * // 'ufo.function-group.src-url.ts-withHttp-b3c4d5e'
 */
export function forgeTaskId(repoName: string, candidate: Pick<ForgeCandidate, 'id' | 'strategy' | 'symbols'> & { profile?: Pick<CandidateProfile, 'entryPoint'> }): string {
  const what = candidate.profile?.entryPoint ?? candidate.symbols[0] ?? candidate.id;
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
  const timings: CertifyTimings = { firstPassMs: 0, fullRunMs: 0, rerunMs: 0, oracleMs: 0, totalMs: 0 };
  const facts: CertifyFacts = {};
  const logs: string[] = [`# forge certification of ${candidate.id} (${candidate.strategy}: ${candidate.symbols.join(', ') || candidate.edits.map((e) => e.path).join(', ')})`];
  const done = (o: OutcomeBody): CertifyOutcome => {
    timings.totalMs = Date.now() - t0;
    return { ...o, ...facts, timings } as CertifyOutcome;
  };
  const reject = (status: 'rejected' | 'skipped', reason: RejectionCode, detail: string, failToPass?: string[]) =>
    done({ status, reason, detail, ...(failToPass ? { failToPass } : {}), log: logs.join('\n') });

  // The static pre-filter found no test that references the deleted code: skipped without running anything.
  if (candidate.testFiles !== undefined && candidate.testFiles.length === 0 && spec.staticSkip) {
    return reject('skipped', 'not-exercised', 'no test file references the deleted code (static pre-filter)');
  }
  // The first pass runs only what the runner collects as tests (helpers, stubs and data under tests/ are not).
  let firstPassFiles = candidate.testFiles ?? [];
  if (firstPassFiles.length > 0 && baseline.collectedFiles.length > 0) {
    firstPassFiles = collectedTestFiles(firstPassFiles, baseline.collectedFiles);
    if (firstPassFiles.length === 0 && spec.staticSkip) {
      return reject('skipped', 'not-exercised', `none of the ${candidate.testFiles!.length} file(s) referencing the deleted code is a test file the runner collects (e.g. ${candidate.testFiles![0]})`);
    }
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
      logs.push(`environment probe: ${reachable.ok ? `clean (${reachable.notes?.join('; ') ?? ''}${reachable.ms !== undefined ? `, ${reachable.ms} ms` : ''})` : [...reachable.problems, ...reachable.found].join('; ')}`);
      if (!reachable.ok) return reject('rejected', 'answer-reachable', [...reachable.found, ...reachable.problems].slice(0, 5).join('; '));
      const setupError = await runSetup(session, spec.setupCommand, timeoutMs);
      if (setupError) return reject('rejected', 'suite-does-not-run', setupError);
      const filter = filterCommandOf(spec);
      const testFiles = firstPassFiles;
      if (filter && testFiles.length > 0) {
        const first = await runSuite(session, { command: fillFilter(filter, testFiles), timeoutMs, reportGlobs: spec.reportGlobs, label: 'first pass (collected tests touching the deleted code)' });
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

    const classified = classifyRun(full, baseline, candidate.strategy, candidate.edits.filter((e) => e.content === null).map((e) => e.path));
    // The baseline ran this suite; a broken tree on which it reports nothing is a deletion that breaks the suite.
    if (classified.crash?.startsWith('suite-does-not-run')) return reject('rejected', 'breaks-suite', `${classified.crash.slice(classified.crash.indexOf(':') + 2)}${firstErrorLine(full.log) ? ` — ${firstErrorLine(full.log)}` : ''}`, classified.failToPass);
    const breakage = suiteBreakage(full, baseline, classified.failToPass);
    facts.failingShare = breakage.share;
    if (baseline.stable.length >= SHARE_CAP_MIN_TESTS && breakage.share > spec.maxFailingShare) {
      const why = breakage.dominant ? ` — ${breakage.dominant.count} of them: ${breakage.dominant.message}` : '';
      return reject('rejected', 'breaks-suite', `${classified.failToPass.length} of ${baseline.stable.length} stable tests fail (${percent(breakage.share)}, above the ${percent(spec.maxFailingShare)} cap)${why}`, classified.failToPass);
    }
    if (classified.crash) return reject('rejected', 'collection-crash', classified.crash.slice(classified.crash.indexOf(':') + 2), classified.failToPass);
    if (classified.failToPass.length === 0) {
      if (classified.flakyOnlyChanged) return reject('rejected', 'only-flaky-tests-fail', 'only tests the baseline found flaky changed outcome');
      return reject('skipped', 'no-test-fails', 'no stable test exercises the deleted code (every one still passes)');
    }
    if (classified.passToPass.length === 0) return reject('rejected', 'breaks-suite', `every stable test fails (${classified.failToPass.length}): the deletion breaks the whole suite`, classified.failToPass);

    // The broken tree again, on the failing tests' files only: a test that passes in any run is flaky, not a target.
    const rerunStart = Date.now();
    const c = { ...classified, ...(await rerunBrokenTree({ provider, spec, baseline, repoDir, repoCommit, full, classified, logs })) };
    timings.rerunMs = Date.now() - rerunStart;
    if (spec.brokenRuns > 1) facts.flakyDropped = c.flakyDropped;
    if (c.failToPass.length === 0) return reject('rejected', 'only-flaky-tests-fail', `each of the ${classified.failToPass.length} failing test(s) passed again on a rerun of the broken tree`, classified.failToPass);
    const failKey = [...keysOf(c.failToPass)].sort().join('\n');
    const dup = input.duplicateOf?.(failKey);
    if (dup) return done({ status: 'duplicate', of: dup, failToPass: c.failToPass, log: logs.join('\n') });

    const doNothing = decideVerdict({ failToPass: c.failToPass, passToPass: c.passToPass, reports: full.reports, expectedCollected: baseline.collected });
    logs.push(`do-nothing agent: ${doNothing.passed ? 'PASSES' : `fails (${doNothing.reasons.length} reasons, e.g. ${doNothing.reasons[0]})`}`);
    if (doNothing.passed) return reject('rejected', 'do-nothing-passes', 'the unchanged broken tree passes the verdict', c.failToPass);

    let instruction: string;
    try {
      instruction = candidate.statement ? await candidate.statement({ failToPass: c.failToPass, removalPatch }) : forgeTemplateStatement(candidate, c.failToPass);
    } catch (error) {
      logs.push(`statement writer failed (${(error as Error).message}); template used`);
      instruction = forgeTemplateStatement(candidate, c.failToPass);
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
          ...(c.flakyDropped.length ? { flakyDropped: c.flakyDropped } : {}),
          failingShare: breakage.share,
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

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/**
 * Runs the broken tree `brokenRuns - 1` more times, at once, each in a fresh sandbox (a run's leftovers — caches,
 * files a test wrote, a warmed-up process — must not decide the next one): the failing tests' files through the
 * runner's filter, or the whole suite when there is no filter or a failing test's file cannot be told.
 */
async function rerunBrokenTree(input: {
  provider: SandboxProvider;
  spec: RunnableForgeSpec;
  baseline: Baseline;
  repoDir: string;
  repoCommit: string;
  full: SuiteRun;
  classified: Classified;
  logs: string[];
}): Promise<{ failToPass: string[]; passToPass: string[]; flakyDropped: string[] }> {
  const { spec, full, classified } = input;
  const filter = filterCommandOf(spec);
  const files = filter ? testFilesOf(full.files, classified.failToPass, full.workdir, input.baseline.testFiles) : undefined;
  const command = filter && files && files.length > 0 ? fillFilter(filter, files) : spec.testCommand;
  const timeoutMs = spec.testTimeoutSeconds * 1000;
  // The reruns are independent: at once, so they cost the wall clock of one filtered run.
  const runs = await Promise.all(
    Array.from({ length: spec.brokenRuns - 1 }, async (_, j) => {
      const i = j + 2;
      const session = await input.provider.open({ sourceDir: input.repoDir, baseCommit: input.repoCommit, mode: 'strict', networkAllowList: spec.networkAllowList, limits: forgeLimits(spec), env: spec.env });
      try {
        const setupError = await runSetup(session, spec.setupCommand, timeoutMs);
        if (setupError) throw new Error(`broken-tree run ${i}: ${setupError}`);
        return await runSuite(session, { command, timeoutMs, reportGlobs: spec.reportGlobs, label: `broken tree, run ${i} of ${spec.brokenRuns} (${files && command !== spec.testCommand ? `failing tests' files: ${files.join(' ')}` : 'full suite'})` });
      } finally {
        await session.close();
      }
    }),
  );
  input.logs.push(...runs.map((r) => r.log));
  // A rerun that reported nothing (it did not start, or timed out) says nothing about any test.
  const reruns = runs.filter((r) => r.tests.size > 0);
  const kept = stableBrokenOutcome(classified.failToPass, classified.passToPass, reruns);
  input.logs.push(`broken tree: ${reruns.length + 1} run(s); ${kept.failToPass.length} test(s) failed in every run${kept.flakyDropped.length ? `; dropped as flaky on the broken tree: ${kept.flakyDropped.join(', ')}` : ''}`);
  return kept;
}

/** The part of a patch that touches the given paths (the source edits, not stripped leftovers). */
function diffFor(patch: string, paths: readonly string[]): string {
  const chunks = patch.split(/^(?=diff --git )/m);
  return chunks.filter((c) => paths.some((p) => c.startsWith(`diff --git a/${p} `))).join('');
}
