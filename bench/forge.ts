/**
 * `npm run bench:forge`: the forge on generated mid-size TypeScript repositories (node's test runner, one process
 * per test file, JUnit reports), in the namespace sandbox: candidates tried per hour, tasks certified per hour, the
 * share of candidates that certify, and how the time grows with repository size. Each size is one forge run over
 * the candidates `findForgeCandidates` returns (capped); the per-candidate cost is then fitted as
 * `fixed + perSuiteSecond × suite time` to project the rate on a repository whose suite takes 30 s.
 *
 * Repositories are deterministic: module i exports three functions; most modules have a test file exercising two
 * of them; some have none (their candidates are skipped by the static pre-filter); a few test files have a flaky
 * test (fails in every other sandbox session) so the baseline has something to exclude.
 *
 * Then the real-shaped run (`bench/forge/run-real-shaped.ts`): the README-style command, nothing else, on a generated
 * Python `src/` library (`--test-cmd 'PYTHONPATH=src python3 -m pytest -q'`, a ≈10 s suite) and a generated TypeScript
 * package (`--test-cmd 'npx vitest run'`, its `node_modules` an untracked link to a prepared copy), concurrency 1:
 * certified tasks per hour, share certified of tried, verdicts, and the spread (files, strategies, failing-share
 * histogram), each next to bare suite runs on the host (median of three) measured in the same run.
 *
 * Options (env): FLYWHEEL_BENCH_SIZES (modules per repository, default "20,60,150"; "0" skips the synthetic part),
 * FLYWHEEL_BENCH_CANDIDATES (candidates tried per size, default 8), FLYWHEEL_BENCH_K (baseline runs, default 3),
 * FLYWHEEL_BENCH_REAL (real-shaped repositories, default "python-src,ts-package"; "0" skips them),
 * FLYWHEEL_BENCH_REAL_CANDIDATES (candidates per real-shaped repository, default 12), FLYWHEEL_BENCH_REAL_REPEATS
 * (runs per real-shaped repository, medians printed, default 1), FLYWHEEL_BENCH_REAL_ROUNDS (pbkdf2 rounds per Python
 * test, the suite's cost; default the generator's, ≈10 s), FLYWHEEL_BENCH_VERBOSE=1 (the forge's progress lines).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { findForgeCandidates } from '../lib/forge/find-forge-candidates.ts';
import { forgeRepository } from '../lib/forge/forge-repository.ts';
import { refusedBeforeRun } from '../lib/forge/report/forge-report.ts';
import { parseForgeSpec } from '../lib/forge/schemas.ts';
import { NamespaceSandboxProvider } from '../lib/harness/sandbox/namespace-sandbox.ts';
import type { SandboxProvider, SandboxSession, SandboxSpec } from '../lib/harness/sandbox/sandbox.ts';
import { median, realShapedLines, runRealShaped, type RealShapedKind, type RealShapedResult } from './forge/run-real-shaped.ts';

const TEST_COMMAND = `node --test --test-reporter=junit --test-reporter-destination="$FLYWHEEL_REPORT_DIR/node-junit.xml" --test-reporter=spec --test-reporter-destination=stderr 'test/**/*.test.ts'`;

/** Writes the repository for `modules` modules; returns its path and file count. */
export function generateForgeRepo(dir: string, modules: number): { files: number } {
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  let files = 0;
  write('package.json', '{ "name": "bench-forge", "type": "module", "private": true }\n');
  for (let i = 0; i < modules; i++) {
    const n = String(i).padStart(3, '0');
    write(
      `src/m${n}/ops${n}.ts`,
      `/** Scales a value by ${i + 2}. */
export function scale${n}(x: number): number {
  const factor = ${i + 2};
  return x * factor;
}

/** Sums the squares of the values, offset by ${i}. */
export function squares${n}(values: number[]): number {
  let total = ${i};
  for (const v of values) total += v * v;
  return total;
}

/** Formats a label; no test calls it. */
export function label${n}(name: string): string {
  return \`\${name}#${i}\`;
}
`,
    );
    files++;
    // One module in seven has no tests at all.
    if (i % 7 === 6) continue;
    const flaky = i % 25 === 3;
    write(
      `test/m${n}/ops${n}.test.ts`,
      `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scale${n}, squares${n} } from '../../src/m${n}/ops${n}.ts';

test('scale${n} scales', () => {
  assert.equal(scale${n}(3), ${3 * (i + 2)});
});
test('squares${n} sums squares', () => {
  assert.equal(squares${n}([1, 2, 3]), ${i + 14});
});
${flaky ? `test('flaky${n}', () => {\n  assert.equal(Number(process.env.BENCH_SESSION ?? '0') % 2, 0);\n});\n` : ''}`,
    );
    files++;
  }
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
  execFileSync('git', ['add', '-A'], { cwd: dir });
  execFileSync('git', ['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'bench repo'], { cwd: dir });
  return { files: files + 1 };
}

/** The namespace sandbox with a per-session counter (what makes the flaky tests flaky). */
class CountingProvider implements SandboxProvider {
  n = 0;
  readonly inner: SandboxProvider;
  constructor(inner: SandboxProvider) {
    this.inner = inner;
  }
  open(spec: SandboxSpec): Promise<SandboxSession> {
    return this.inner.open({ ...spec, env: { ...spec.env, BENCH_SESSION: String(this.n++) } });
  }
}

/** Least squares y = a + b·x. */
function fit(points: Array<[number, number]>): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const sxx = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  const b = sxx === 0 ? 0 : points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0) / sxx;
  return { a: my - b * mx, b };
}

interface SizeResult {
  modules: number;
  files: number;
  suiteS: number;
  baselineS: number;
  tried: number;
  /** Refused by the ranking before any run (one-liners, near duplicates). */
  refused: number;
  certified: number;
  share: number;
  candidatesPerHour: number;
  certifiedPerHour: number;
  medianCandidateS: number;
  medianCertifiedS: number;
  /** Medians over certified candidates: first pass, full run on the broken tree, oracle, the rest (set-up, probes, registration). */
  phasesS: { firstPass: number; fullRun: number; oracle: number; other: number };
  verdicts: Record<string, number>;
}

async function benchSize(modules: number, candidates: number, k: number): Promise<SizeResult> {
  const root = mkdtempSync(join(tmpdir(), 'fw-bench-forge-'));
  try {
    const repo = join(root, 'repo');
    mkdirSync(repo);
    const { files } = generateForgeRepo(repo, modules);
    const ports = openLocalPorts(join(root, 'data'));
    const provider = new CountingProvider(new NamespaceSandboxProvider({ root: join(root, 'sandbox') }));
    try {
      const spec = parseForgeSpec({ name: `bench${modules}`, repo: { kind: 'local', path: repo }, testCommand: TEST_COMMAND, runner: { kind: 'node-test' }, k, maxTasks: candidates, maxCandidates: candidates, suite: `bench-${modules}` });
      const result = await forgeRepository({ spec, provider, ports, candidates: findForgeCandidates, workDir: join(root, 'work') });
      // Candidates the ranking refused without a run are counted apart: the rates are over candidates that ran.
      const ran = result.candidates.filter((c) => !refusedBeforeRun(c));
      const tried = ran.length;
      const certified = result.tasks.length;
      const hours = result.certifyMs / 3_600_000;
      return {
        modules,
        files,
        suiteS: median(result.baseline.durationsMs) / 1000,
        baselineS: result.baseline.durationsMs.reduce((a, b) => a + b, 0) / 1000,
        tried,
        certified,
        share: tried ? certified / tried : 0,
        candidatesPerHour: tried / hours,
        certifiedPerHour: certified / hours,
        refused: result.candidates.length - tried,
        medianCandidateS: median(ran.map((c) => c.durationMs)) / 1000,
        medianCertifiedS: median(ran.filter((c) => c.status === 'certified').map((c) => c.durationMs)) / 1000,
        phasesS: (() => {
          const certified = result.candidates.filter((c) => c.status === 'certified' && c.timings);
          const m = (f: (c: (typeof certified)[number]) => number) => median(certified.map(f)) / 1000;
          return {
            firstPass: m((c) => c.timings!.firstPassMs),
            fullRun: m((c) => c.timings!.fullRunMs),
            oracle: m((c) => c.timings!.oracleMs),
            other: m((c) => c.durationMs - c.timings!.firstPassMs - c.timings!.fullRunMs - c.timings!.oracleMs),
          };
        })(),
        verdicts: result.counts,
      };
    } finally {
      ports.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const sizes = (process.env.FLYWHEEL_BENCH_SIZES ?? '20,60,150').split(',').map(Number).filter((n) => n > 0);
const perSize = Number(process.env.FLYWHEEL_BENCH_CANDIDATES ?? 8);
const k = Number(process.env.FLYWHEEL_BENCH_K ?? 3);
const results: SizeResult[] = [];
for (const modules of sizes) {
  const r = await benchSize(modules, perSize, k);
  results.push(r);
  process.stdout.write(
    `modules ${String(r.modules).padStart(4)} · files ${String(r.files).padStart(4)} · suite ${r.suiteS.toFixed(2)} s (baseline x${k}: ${r.baselineS.toFixed(1)} s) · ` +
      `tried ${r.tried}, certified ${r.certified} (${(r.share * 100).toFixed(0)}%), ${r.refused} refused before a run · median per candidate ${r.medianCandidateS.toFixed(2)} s, per certified ${r.medianCertifiedS.toFixed(2)} s · ` +
      `${r.candidatesPerHour.toFixed(0)} candidates/h, ${r.certifiedPerHour.toFixed(0)} certified/h · ${JSON.stringify(r.verdicts)}\n` +
      `    per certified task (medians): first pass ${r.phasesS.firstPass.toFixed(2)} s, full run ${r.phasesS.fullRun.toFixed(2)} s, oracle ${r.phasesS.oracle.toFixed(2)} s, other ${r.phasesS.other.toFixed(2)} s\n`,
  );
}
const points = results.filter((r) => Number.isFinite(r.medianCertifiedS)).map((r) => [r.suiteS, r.medianCertifiedS] as [number, number]);
if (points.length >= 2) {
  const { a, b } = fit(points);
  const at30 = a + b * 30;
  process.stdout.write(
    `fit: seconds per certified task = ${a.toFixed(2)} + ${b.toFixed(2)} × suite seconds; at a 30 s suite: ${at30.toFixed(1)} s per certified task → ${(3600 / at30).toFixed(0)} certified/h at concurrency 1 (aim 60/h)\n`,
  );
}

// The real-shaped run: the README-style command on generated real-shaped repositories.
const realKinds = (process.env.FLYWHEEL_BENCH_REAL ?? 'python-src,ts-package').split(',').filter((x): x is RealShapedKind => x === 'python-src' || x === 'ts-package');
const realCandidates = Number(process.env.FLYWHEEL_BENCH_REAL_CANDIDATES ?? 12);
const repeats = Math.max(1, Number(process.env.FLYWHEEL_BENCH_REAL_REPEATS ?? 1));
const rounds = process.env.FLYWHEEL_BENCH_REAL_ROUNDS !== undefined ? Number(process.env.FLYWHEEL_BENCH_REAL_ROUNDS) : undefined;
const verbose = process.env.FLYWHEEL_BENCH_VERBOSE === '1';
const synthetic = results.filter((r) => Number.isFinite(r.certifiedPerHour));
for (const kind of realKinds) {
  const runs: RealShapedResult[] = [];
  for (let i = 0; i < repeats; i++) {
    const r = await runRealShaped({ kind, candidates: realCandidates, k, ...(rounds !== undefined ? { workRounds: rounds } : {}), ...(verbose ? { log: (text: string) => process.stderr.write(text.split('\n').map((line) => `  [${kind}] ${line}\n`).join('')) } : {}) });
    runs.push(r);
    process.stdout.write(`${realShapedLines(r).join('\n')}\n`);
  }
  const ok = runs.filter((r) => r.report && r.report.tried > 0);
  if (repeats > 1 && ok.length > 0) {
    const m = (f: (r: RealShapedResult) => number) => median(ok.map(f));
    process.stdout.write(
      `${kind}: medians over ${ok.length} run(s): ${m((r) => r.certifiedPerHour!).toFixed(0)} certified/h, ${(100 * m((r) => r.report!.certifiedShare)).toFixed(0)}% certified of tried, ` +
        `${m((r) => r.medianCertifiedS!).toFixed(1)} s per certified task (×${m((r) => r.medianCertifiedS! / r.bareSuiteS).toFixed(1)} bare suite)\n`,
    );
  }
}
if (realKinds.length > 0 && synthetic.length > 0) {
  process.stdout.write(`synthetic, for comparison: ${synthetic.map((r) => `${r.modules} modules ${r.certifiedPerHour.toFixed(0)} certified/h at ${r.suiteS.toFixed(1)} s suites, ${(100 * r.share).toFixed(0)}% certified`).join('; ')}\n`);
}
