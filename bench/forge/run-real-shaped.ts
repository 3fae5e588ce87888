/**
 * The real-shaped part of `npm run bench:forge`: the README-style command on a generated Python `src/` library and a
 * generated TypeScript package (the same spec `flywheel forge run --repo … --test-cmd …` builds, candidates from the
 * same source, concurrency 1), measured next to one bare suite run on the host in the same process.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forgeProgressLine, specFromFlags } from '../../lib/cli/forge.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { forgeCandidateSource } from '../../lib/forge/find-forge-candidates.ts';
import { forgeRepository } from '../../lib/forge/forge-repository.ts';
import { forgeReport, refusedBeforeRun, type ForgeReport } from '../../lib/forge/report/forge-report.ts';
import type { CandidateRecordBody } from '../../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../../lib/harness/sandbox/namespace-sandbox.ts';
import { reportLines } from './report-lines.ts';
import { generatePythonSrcRepo, PYTHON_SRC_TEST_COMMAND } from './generate-python-src.ts';
import { generateTsPackage, TS_PACKAGE_TEST_COMMAND } from './generate-ts-package.ts';

export type RealShapedKind = 'python-src' | 'ts-package';

export interface RealShapedInput {
  kind: RealShapedKind;
  /** Candidates tried (and the most tasks certified). */
  candidates: number;
  k: number;
  /** pbkdf2 rounds per Python test (the suite's cost); the generator's default when absent. */
  workRounds?: number;
  /** Progress lines (the CLI's own). */
  log?: (line: string) => void;
}

export interface RealShapedResult {
  kind: RealShapedKind;
  command: string;
  /** Median of three bare runs of the test command on the host (no sandbox), seconds: the ratios' unit. */
  bareSuiteS: number;
  /** Median of the forge's sandboxed baseline runs, seconds. */
  baselineSuiteS?: number;
  collected?: number;
  stable?: number;
  /** `forge report` of the run (reasons, spread, failing-share histogram). */
  report?: ForgeReport;
  certifyS?: number;
  certifiedPerHour?: number;
  candidatesPerHour?: number;
  /** Median seconds per tried candidate and per certified one. */
  medianCandidateS?: number;
  medianCertifiedS?: number;
  /** Medians over certified candidates, seconds: first pass, full run on the broken tree, its reruns, oracle, the rest. */
  phasesS?: { firstPass: number; fullRun: number; reruns: number; oracle: number; other: number };
  /** The run failed before certifying anything (e.g. the baseline): its message. */
  error?: string;
}

/**
 * The median (NaN for none).
 *
 * @example
 * median([3, 1, 2]); // 2
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function bareRun(command: string, cwd: string): number {
  const t0 = performance.now();
  try {
    // No bytecode left behind: the forge copies tracked files only, but a bench should not leave a tree it did not make.
    execSync(command, { cwd, stdio: 'ignore', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  } catch {
    // A failing bare run still measures the suite's cost; the forge's baseline says what failed.
  }
  return (performance.now() - t0) / 1000;
}

function phasesOf(certified: readonly CandidateRecordBody[]): RealShapedResult['phasesS'] {
  const timed = certified.filter((c) => c.timings);
  const m = (f: (c: CandidateRecordBody) => number) => median(timed.map(f)) / 1000;
  return {
    firstPass: m((c) => c.timings!.firstPassMs),
    fullRun: m((c) => c.timings!.fullRunMs),
    reruns: m((c) => c.timings!.rerunMs ?? 0),
    oracle: m((c) => c.timings!.oracleMs),
    other: m((c) => c.durationMs - c.timings!.firstPassMs - c.timings!.fullRunMs - (c.timings!.rerunMs ?? 0) - c.timings!.oracleMs),
  };
}

/**
 * @example
 * const r = await runRealShaped({ kind: 'python-src', candidates: 12, k: 3 });
 * console.log(r.certifiedPerHour, r.report?.certified, r.report?.tried);
 */
export async function runRealShaped(input: RealShapedInput): Promise<RealShapedResult> {
  const root = mkdtempSync(join(tmpdir(), `fw-bench-${input.kind}-`));
  const repo = join(root, input.kind === 'python-src' ? 'tally' : 'urlkit');
  mkdirSync(repo);
  const command = input.kind === 'python-src' ? PYTHON_SRC_TEST_COMMAND : TS_PACKAGE_TEST_COMMAND;
  if (input.kind === 'python-src') generatePythonSrcRepo(repo, input.workRounds !== undefined ? { workRounds: input.workRounds } : {});
  else generateTsPackage(repo);
  // The median of three bare runs: one run on a shared machine can land on a load spike.
  const bareSuiteS = median([bareRun(command, repo), bareRun(command, repo), bareRun(command, repo)]);
  const ports = openLocalPorts(join(root, 'data'));
  try {
    // Exactly what `flywheel forge run --repo <repo> --test-cmd '<command>' --max-tasks N --max-candidates N --k K` builds.
    const spec = await specFromFlags({ repo, testCmd: command, maxTasks: String(input.candidates), maxCandidates: String(input.candidates), k: String(input.k), concurrency: '1', suite: `bench-${input.kind}`, name: input.kind });
    const provider = new NamespaceSandboxProvider({ root: join(root, 'sandbox') });
    const result = await forgeRepository({ spec, provider, ports, candidates: forgeCandidateSource(), workDir: join(root, 'work'), ...(input.log ? { onProgress: (e) => input.log!(forgeProgressLine(e)) } : {}) });
    const report = await forgeReport(ports.records, result.runId);
    // Per hour of the certification phase's wall clock (what a user waits), not of the candidates' summed durations.
    const hours = result.certifyMs / 3_600_000;
    const ran = result.candidates.filter((c) => !refusedBeforeRun(c));
    return {
      kind: input.kind,
      command,
      bareSuiteS,
      baselineSuiteS: median(result.baseline.durationsMs) / 1000,
      collected: result.baseline.collected,
      stable: result.baseline.stable.length,
      report,
      certifyS: result.certifyMs / 1000,
      certifiedPerHour: hours > 0 ? report.certified / hours : 0,
      candidatesPerHour: hours > 0 ? report.tried / hours : 0,
      medianCandidateS: median(ran.map((c) => c.durationMs)) / 1000,
      medianCertifiedS: median(ran.filter((c) => c.status === 'certified').map((c) => c.durationMs)) / 1000,
      phasesS: phasesOf(ran.filter((c) => c.status === 'certified')),
    };
  } catch (error) {
    return { kind: input.kind, command, bareSuiteS, error: (error as Error).message.split('\n')[0]!.slice(0, 400) };
  } finally {
    ports.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;

/**
 * The result as printable lines, ratios against the bare suite run.
 *
 * @example
 * process.stdout.write(`${realShapedLines(await runRealShaped({ kind: 'python-src', candidates: 12, k: 3 })).join('\n')}\n`);
 */
export function realShapedLines(r: RealShapedResult): string[] {
  const head = `${r.kind} · \`${r.command}\` · bare suite ${r.bareSuiteS.toFixed(2)} s`;
  if (r.error || !r.report) return [`${head} · FAILED: ${r.error ?? 'no result'}`];
  const s = r.report;
  const perCert = r.medianCertifiedS ?? Number.NaN;
  return [
    `${head} · sandboxed baseline ${r.baselineSuiteS!.toFixed(2)} s (×${(r.baselineSuiteS! / r.bareSuiteS).toFixed(2)} bare) · ${r.collected} tests, ${r.stable} stable`,
    `  tried ${s.tried}, certified ${s.certified} (${s.tried ? pct(s.certified / s.tried) : '-'} of tried; aim ≥ 50%) · ${r.certifiedPerHour!.toFixed(0)} certified/h (aim ≥ 60 on a 10-s suite), ${r.candidatesPerHour!.toFixed(0)} candidates/h · ` +
      `median per candidate ${r.medianCandidateS!.toFixed(1)} s, per certified ${Number.isFinite(perCert) ? `${perCert.toFixed(1)} s (×${(perCert / r.bareSuiteS).toFixed(1)} bare suite)` : '-'}`,
    ...(r.phasesS && Number.isFinite(r.phasesS.fullRun)
      ? [`  per certified task (medians): first pass ${r.phasesS.firstPass.toFixed(1)} s, full run ${r.phasesS.fullRun.toFixed(1)} s, broken-tree reruns ${r.phasesS.reruns.toFixed(1)} s, oracle ${r.phasesS.oracle.toFixed(1)} s, other (probes, set-up, statement) ${r.phasesS.other.toFixed(1)} s`]
      : []),
    ...reportLines(s).map((l) => `  ${l}`),
  ];
}
