/**
 * `forge plan`: the dry run before an hour-long forge run. It prepares the work repository, resolves the runner and
 * the environment exactly as a run does, runs the suite ONCE, finds and ranks the candidates, and returns what a run
 * would do: the resolved commands, the baseline, which test files reach which source files, the first candidates it
 * would try and why others are refused, and an estimate of the run's length. Nothing is certified or recorded.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxProvider } from '../../harness/sandbox/sandbox.ts';
import type { ForgeCandidate } from '../certify-candidate.ts';
import type { ForgeEnvironmentRecord } from '../environment/forge-environment.ts';
import { prepareWorkRepo } from '../forge-git.ts';
import type { CandidateSource } from '../forge-repository.ts';
import { collectedTestFiles, testUniverse } from '../rank/candidate-features.ts';
import { rankCandidates, type CandidateRank } from '../rank/rank-candidates.ts';
import { runBaseline } from '../run-baseline.ts';
import type { ResolvedRunner } from '../runner/resolve-runner.ts';
import { candidateLimit, setUpForgeRun } from '../set-up-forge-run.ts';
import type { ForgeSpec, RunnableForgeSpec } from '../schemas.ts';

/** Candidates shown by default. */
export const DEFAULT_PLAN_SHOW = 10;

export interface PlannedCandidate {
  id: string;
  /** What a user calls (the profile's entry point, else the first symbol, else the id). */
  entryPoint: string;
  strategy: string;
  files: string[];
  /** Collected test files that reach it (the first pass runs these). */
  relatedTests: string[];
  rank: CandidateRank;
}

export interface ForgePlan {
  /** The spec a run would use (test command, filter and environment derived where not given). */
  spec: RunnableForgeSpec;
  runner: ResolvedRunner;
  environment: ForgeEnvironmentRecord;
  baseline: { tests: number; stable: number; flaky: number; skipped: number; collectedFiles: string[]; seconds: number };
  /** Source file → the collected test files that statically reach it. */
  testMap: Record<string, string[]>;
  candidates: {
    found: number;
    /** Would be tried (after refusals, at most the run's candidate limit). */
    toTry: number;
    limit: number;
    refused: number;
    /** Refusals by reason. */
    refusedBy: Record<string, number>;
  };
  /** The first candidates a run tries, in order. */
  first: PlannedCandidate[];
  /** The first refusals, with their reasons. */
  refusedExamples: Array<{ id: string; reason: string; detail: string }>;
  estimate: {
    suiteSeconds: number;
    /** Whole-suite runs an upper-bound run needs: the baseline's k, then per candidate tried its passes. */
    suiteRuns: number;
    seconds: number;
    note: string;
  };
  /** How long the plan itself took. */
  wallMs: number;
}

export interface PlanForgeInput {
  spec: ForgeSpec;
  provider: SandboxProvider;
  candidates: CandidateSource;
  sourceCacheDir?: string;
  /** Candidates listed in `first` (default `DEFAULT_PLAN_SHOW`). */
  show?: number;
}

/**
 * Suite runs (in whole-suite units) one candidate costs at most. With a filter: the first pass over its tests' share,
 * the full run on the broken tree, its failing tests' files again (`brokenRuns - 1` times), and the oracle over them.
 * Without one (no first pass): the full run, `brokenRuns - 1` full reruns, and k full oracle runs.
 */
export function suiteRunsPerCandidate(spec: Pick<RunnableForgeSpec, 'k' | 'brokenRuns' | 'runner'>, testShare: number): number {
  if (spec.runner.filterCommand === undefined) return 1 + (spec.brokenRuns - 1) + spec.k;
  return testShare + 1 + (spec.brokenRuns - 1) * testShare + testShare;
}

function toPlanned(candidate: ForgeCandidate, rank: CandidateRank, relatedTests: string[]): PlannedCandidate {
  return {
    id: candidate.id,
    entryPoint: candidate.profile?.entryPoint ?? candidate.symbols[0] ?? candidate.id,
    strategy: candidate.strategy,
    files: candidate.edits.map((e) => e.path),
    relatedTests,
    rank,
  };
}

/**
 * @example
 * const plan = await planForge({ spec, provider: new NamespaceSandboxProvider(), candidates: findForgeCandidates });
 * console.log(plan.baseline.tests, plan.first.map((c) => c.entryPoint), plan.estimate.seconds);
 */
export async function planForge(input: PlanForgeInput): Promise<ForgePlan> {
  const t0 = Date.now();
  const workDir = await mkdtemp(join(tmpdir(), 'fw-forge-plan-'));
  try {
    const work = await prepareWorkRepo(input.spec.repo, join(workDir, 'work'), input.sourceCacheDir ? { cacheDir: input.sourceCacheDir } : {});
    const { runner, spec, environment } = await setUpForgeRun(work, input.spec, input.provider);
    const baseline = await runBaseline({ provider: input.provider, sourceDir: work.dir, commit: work.baseCommit, spec: { ...spec, k: 1 } });
    const found = await input.candidates(work, spec);
    const limit = candidateLimit(spec);
    const ranked = rankCandidates(found, { spec, baseline, limit });

    const universe = testUniverse(found, baseline.collectedFiles);
    // Per source file, the tests its symbols' candidates name; a whole-file deletion (every test that imports the
    // package, through a re-exporting __init__/index) speaks only for files no symbol candidate covers.
    const testMap = new Map<string, Set<string>>();
    for (const wholeFiles of [false, true]) {
      const covered = new Set(testMap.keys());
      for (const c of found) {
        if ((c.strategy === 'file') !== wholeFiles) continue;
        const tests = collectedTestFiles(c, universe);
        for (const e of c.edits) {
          if (wholeFiles && covered.has(e.path)) continue;
          const set = testMap.get(e.path) ?? new Set<string>();
          for (const t of tests) set.add(t);
          testMap.set(e.path, set);
        }
      }
    }
    const refusedBy: Record<string, number> = {};
    for (const r of ranked.refused) refusedBy[r.reason] = (refusedBy[r.reason] ?? 0) + 1;

    const suiteSeconds = (baseline.durationsMs[0] ?? 0) / 1000;
    const perCandidate = ranked.ordered.map(({ rank }) => suiteRunsPerCandidate(spec, rank.relatedTests / universe.size));
    const suiteRuns = spec.k + perCandidate.reduce((a, b) => a + b, 0);
    const show = input.show ?? DEFAULT_PLAN_SHOW;
    return {
      spec,
      runner,
      environment,
      baseline: {
        tests: baseline.collected,
        stable: baseline.stable.length,
        flaky: baseline.flaky.length,
        skipped: baseline.skipped.length,
        collectedFiles: baseline.collectedFiles,
        seconds: suiteSeconds,
      },
      testMap: Object.fromEntries([...testMap].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([file, tests]) => [file, [...tests].sort()])),
      candidates: { found: found.length, toTry: ranked.ordered.length, limit, refused: ranked.refused.length, refusedBy },
      first: ranked.ordered.slice(0, show).map(({ candidate, rank }) => toPlanned(candidate, rank, collectedTestFiles(candidate, universe))),
      refusedExamples: ranked.refused.slice(0, show).map((r) => ({ id: r.candidate.id, reason: r.reason, detail: r.detail })),
      estimate: {
        suiteSeconds,
        suiteRuns: Math.round(suiteRuns * 10) / 10,
        seconds: Math.round(suiteRuns * suiteSeconds),
        note: `upper bound: the ${spec.k} baseline runs, then every one of the ${ranked.ordered.length} candidates through the oracle (setup commands aside); a run stops at ${spec.maxTasks} certified task(s)`,
      },
      wallMs: Date.now() - t0,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
