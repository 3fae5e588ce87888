/**
 * `npm run bench:experiments`: what experiments cost, each figure beside a baseline measured in the same run (the
 * machine is shared and noisy, so ratios say more than absolute numbers).
 *
 * 1. assignment: p50/p99 latency and throughput of the pure `assignUnit` and of the in-memory cache path behind
 *    `POST /v1/assignments`; baseline a bare FNV-1a of the same strings (`bench/experiments/assignment-bench.ts`);
 * 2. analysis: `analyzeExperiment` over DuckDB on 1 million units and 10 million metric events (generated once into a
 *    kept data folder); baseline a bare DuckDB `count(*)`/`sum` scan of the same files (`analysis-bench.ts`);
 * 3. ingest: exposures and metric events per second through the local runtime (real HTTP, batches of 500, until the
 *    archive holds them all); baseline feedback ingest of the same count (`ingest-bench.ts`).
 *
 * Flags: --only assignment,analysis,ingest  --units 1000000 --events 10000000 --analysis-runs 3
 *        --assign-units 200000 --assign-runs 7  --ingest 50000 --ingest-runs 5 --concurrency 4
 *        --data-dir <kept analysis folder; default <tmp>/flywheel-bench-experiments/u<units>-e<events>>  --json <file>
 * A quick run: `npm run bench:experiments -- --units 100000 --events 1000000 --assign-units 50000 --ingest 5000 --ingest-runs 3`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnalysisFigures } from './experiments/analysis-bench.ts';
import type { AssignmentFigures } from './experiments/assignment-bench.ts';
import { fmt, formatTable, median, progress, ratio } from './experiments/figures.ts';
import { BENCH_TRUE_EFFECT } from './experiments/generate-archive.ts';
import { INGEST_KINDS, type IngestKind, type IngestRun } from './experiments/ingest-bench.ts';

const PARTS = ['assignment', 'analysis', 'ingest'] as const;
type Part = (typeof PARTS)[number];

const { values: flags } = parseArgs({
  options: {
    only: { type: 'string', default: PARTS.join(',') },
    units: { type: 'string', default: '1000000' },
    events: { type: 'string', default: '10000000' },
    'analysis-runs': { type: 'string', default: '3' },
    'assign-units': { type: 'string', default: '200000' },
    'assign-runs': { type: 'string', default: '7' },
    ingest: { type: 'string', default: '50000' },
    'ingest-runs': { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '4' },
    'data-dir': { type: 'string' },
    json: { type: 'string' },
  },
  strict: true,
});

function positiveInt(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} takes a positive whole number (got ${value})`);
  return n;
}

const only = new Set(flags.only.split(',').map((p) => p.trim()));
for (const p of only) if (!PARTS.includes(p as Part)) throw new Error(`--only takes ${PARTS.join(', ')} (got ${p})`);
const units = positiveInt('units', flags.units);
const events = positiveInt('events', flags.events);

function printAssignment(f: AssignmentFigures): string[] {
  const base = f.rows[0]!;
  return [
    `Assignment (${fmt(f.units)} distinct units, median of ${f.runs} runs; each call timed alone, the timer itself costs ${fmt(f.timerNs)} ns p50)`,
    '',
    formatTable(
      ['path', 'p50 ns', 'p99 ns', 'p50 vs baseline', 'assignments/s', 'throughput vs baseline'],
      f.rows.map((r) => [r.name, fmt(r.p50Ns), fmt(r.p99Ns), r === base ? '1.00×' : ratio(r.p50Ns, base.p50Ns), fmt(r.perSecond), r === base ? '1.00×' : ratio(r.perSecond, base.perSecond)]),
    ),
    '',
    `The cache reloaded the running experiments from the records ${f.cacheReloads} time(s) while timed (past half its 5 s age a request starts one in the background).`,
  ];
}

function printAnalysis(f: AnalysisFigures, m: { analysisMs: number; queryMs: number; baselineMs: number }): string[] {
  const primary = f.analysis.metrics.find((x) => x.role === 'primary');
  const comparison = primary?.comparisons[0];
  const ci = comparison?.ci ? `[${fmt(comparison.ci.low * 100, 2)}%, ${fmt(comparison.ci.high * 100, 2)}%]` : '–';
  const seq = comparison?.sequentialCi ? `[${fmt(comparison.sequentialCi.low * 100, 2)}%, ${fmt(comparison.sequentialCi.high * 100, 2)}%]` : '–';
  return [
    `Analysis (${fmt(f.archive.units)} units, ${fmt(f.archive.events)} metric events, ${fmt(f.archive.exposures)} exposures, ${fmt(f.archive.bytes / 2 ** 30, 2)} GiB of JSON Lines; ` +
      `DuckDB on ${availableParallelism()} threads; median of ${f.runs} runs)`,
    '',
    formatTable(
      ['what', 'seconds', 'vs baseline scan', 'units/s', 'events/s'],
      [
        ['bare scan: count(*), sum(value) (baseline)', fmt(m.baselineMs / 1000, 2), '1.00×', fmt(f.archive.units / (m.baselineMs / 1000)), fmt(f.archive.events / (m.baselineMs / 1000))],
        ['analyzeExperiment (store: false)', fmt(m.analysisMs / 1000, 2), ratio(m.analysisMs, m.baselineMs), fmt(f.archive.units / (m.analysisMs / 1000)), fmt(f.archive.events / (m.analysisMs / 1000))],
        ['  of which the SQL (queryMs)', fmt(m.queryMs / 1000, 2), ratio(m.queryMs, m.baselineMs), '', ''],
        ['analyzeExperiment (snapshot + PNGs stored, once)', fmt(f.storedMs / 1000, 2), ratio(f.storedMs, m.baselineMs), '', ''],
      ],
    ),
    '',
    `archive ${f.archive.reused ? 'reused from an earlier run' : `written in ${fmt(f.archive.seconds, 1)} s`}; metrics analysed: ${f.analysis.metrics.map((x) => x.metric).join(', ')}`,
    `primary ${primary?.metric ?? '–'}: relative lift ${comparison?.relativeLift == null ? '–' : `${fmt(comparison.relativeLift * 100, 2)}%`} (true effect +${fmt(BENCH_TRUE_EFFECT.accepted * 100, 0)}%), ` +
      `95% CI ${ci}, sequential ${seq}, verdict ${comparison?.verdict ?? '–'}; SRM p ${f.analysis.srm.pValue === null ? '–' : fmt(f.analysis.srm.pValue, 3)}; recommendation ${f.analysis.recommendation.action}`,
  ];
}

function printIngest(f: Record<IngestKind, IngestRun[]>, items: number, concurrency: number): string[] {
  const base = f.feedback;
  const baseStored = median(base.map((r) => r.storedPerSec));
  const baseAccepted = median(base.map((r) => r.acceptedPerSec));
  return [
    `Ingest through the local runtime (${fmt(items)} items per kind and run, batches of 500, ${concurrency} connections, median of ${f.feedback.length} runs)`,
    '',
    formatTable(
      ['kind', 'accepted/s', 'vs feedback', 'stored/s', 'vs feedback', 'p50 ms/batch', 'p99 ms/batch', 'errors'],
      INGEST_KINDS.map((k) => {
        const runs = f[k];
        const stored = median(runs.map((r) => r.storedPerSec));
        const accepted = median(runs.map((r) => r.acceptedPerSec));
        return [
          k === 'feedback' ? 'feedback (baseline)' : k,
          fmt(accepted),
          ratio(accepted, baseAccepted),
          fmt(stored),
          ratio(stored, baseStored),
          fmt(median(runs.map((r) => r.p50Ms)), 1),
          fmt(median(runs.map((r) => r.p99Ms)), 1),
          String(runs.reduce((a, r) => a + r.errors, 0)),
        ];
      }),
    ),
    '',
    'stored/s: items / time from the first request until the raw archive held every one of them (thumbs derived from feedback not counted).',
  ];
}

async function main(): Promise<void> {
  const commandLine = `npm run bench:experiments -- ${process.argv.slice(2).join(' ')}`.trimEnd();
  const started = Date.now();
  const out: string[] = [`command: ${commandLine}`, `machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}`, ''];
  const json: Record<string, unknown> = { commandLine };

  if (only.has('assignment')) {
    progress('assignment');
    // Each part loads what it measures only when it runs.
    const { benchAssignment } = await import('./experiments/assignment-bench.ts');
    const scratch = mkdtempSync(join(tmpdir(), 'flywheel-bench-assign-'));
    try {
      const f = await benchAssignment({ units: positiveInt('assign-units', flags['assign-units']), runs: positiveInt('assign-runs', flags['assign-runs']), dataDir: scratch });
      out.push(...printAssignment(f), '');
      json.assignment = f;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  if (only.has('analysis')) {
    progress('analysis');
    const { analysisMedians, benchAnalysis } = await import('./experiments/analysis-bench.ts');
    const dataDir = flags['data-dir'] ?? join(tmpdir(), 'flywheel-bench-experiments', `u${units}-e${events}`);
    mkdirSync(dataDir, { recursive: true });
    const f = await benchAnalysis({ units, events, runs: positiveInt('analysis-runs', flags['analysis-runs']), dataDir });
    const medians = analysisMedians(f);
    out.push(...printAnalysis(f, medians), `(data folder kept for the next run: ${dataDir})`, '');
    json.analysis = { ...f, medians };
  }
  if (only.has('ingest')) {
    progress('ingest');
    const { benchIngest } = await import('./experiments/ingest-bench.ts');
    const items = positiveInt('ingest', flags.ingest);
    const concurrency = positiveInt('concurrency', flags.concurrency);
    const f = await benchIngest({ items, runs: positiveInt('ingest-runs', flags['ingest-runs']), concurrency });
    out.push(...printIngest(f, items, concurrency), '');
    json.ingest = f;
  }
  out.push(`bench took ${fmt((Date.now() - started) / 1000)} s`);
  process.stdout.write(`\n${out.join('\n')}\n`);
  if (flags.json) writeFileSync(flags.json, `${JSON.stringify(json, null, 2)}\n`);
}

await main();
