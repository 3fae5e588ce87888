/**
 * Analysis time at scale, locally: `analyzeExperiment` over `DuckDbQuery` on a generated archive (by default 1 million
 * units and 10 million metric events, `generate-archive.ts`), against the baseline of a bare DuckDB scan of the same
 * files (`count(*)` and `sum(value)` of the metric events, `count(*)` of the exposures) in the same run.
 *
 * The data folder is kept between runs (one per size), so the archive is written once; the experiment record is put
 * in its records. Analyses run with `store: false` (the figure is the engine and the statistics); one more with the
 * snapshot stored (its record and the lift PNGs) is timed on its own.
 *
 * @example
 * const figures = await benchAnalysis({ units: 1_000_000, events: 10_000_000, runs: 3, dataDir });
 */
import { join } from 'node:path';
import { DuckDbQuery } from '../../lib/drivers/local/duckdb-query.ts';
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { analyzeExperiment } from '../../lib/experiments/analysis/analyze-experiment.ts';
import { createExperimentRecord } from '../../lib/experiments/experiment-store.ts';
import { ExperimentInput, type ExperimentAnalysis, type ExperimentRecord } from '../../lib/experiments/schemas.ts';
import { BENCH_ANALYSIS_TO, BENCH_EXPERIMENT_ID, BENCH_STARTED_AT, BENCH_TENANT, benchExperimentInput, ensureBenchArchive, type BenchArchive } from './generate-archive.ts';
import { median, progress } from './figures.ts';

export interface AnalysisFigures {
  archive: BenchArchive;
  runs: number;
  /** Milliseconds per run. */
  analysisMs: number[];
  /** The engine's share of each analysis (its `queryMs`). */
  queryMs: number[];
  baselineMs: number[];
  /** One analysis with the snapshot and its PNGs stored. */
  storedMs: number;
  /** The last analysis, for its numbers (the generated effect should show). */
  analysis: ExperimentAnalysis;
}

/** The baseline scan: every metric event and exposure of the tenant read once, the least any analysis reads. */
export const BASELINE_SQL = [
  `SELECT count(*) AS n, sum(value) AS total FROM metric_events WHERE tenant = '${BENCH_TENANT}'`,
  `SELECT count(*) AS n FROM exposures WHERE tenant = '${BENCH_TENANT}'`,
];

function benchRecord(units: number): ExperimentRecord {
  const definition = ExperimentInput.parse(benchExperimentInput(Math.round(units / 2)));
  const at = BENCH_STARTED_AT.toISOString();
  return {
    definition,
    status: 'running',
    plannedUnitsPerArm: definition.plannedUnitsPerArm ?? Math.round(units / 2),
    rampStep: 0,
    rampStepSince: at,
    stoppedArms: [],
    origin: { kind: 'person', by: 'bench' },
    createdAt: at,
    startedAt: at,
    revision: 0,
  };
}

/** Writes (or reuses) the archive in `dataDir`, then times `runs` analyses and as many baseline scans, interleaved. */
export async function benchAnalysis(options: { units: number; events: number; runs: number; dataDir: string }): Promise<AnalysisFigures> {
  const blobsRoot = join(options.dataDir, 'blobs');
  progress(`archive: ${options.units.toLocaleString('en-US')} units, ${options.events.toLocaleString('en-US')} metric events under ${blobsRoot}`);
  const archive = await ensureBenchArchive(blobsRoot, { units: options.units, events: options.events });
  progress(archive.reused ? 'archive: reused from an earlier run' : `archive: written in ${archive.seconds.toFixed(1)} s`);

  const local = openLocalPorts(options.dataDir);
  const query = await DuckDbQuery.open(blobsRoot);
  try {
    await createExperimentRecord(local.records, benchRecord(options.units), 'bench', BENCH_STARTED_AT);
    // The clock the use case sees: the end of the window, so nothing depends on today's date.
    const ports = { records: local.records, blobs: local.blobs, query, now: () => BENCH_ANALYSIS_TO };
    // Warm-up: the files into the page cache, DuckDB's first plan.
    for (const sql of BASELINE_SQL) await query.run(sql);

    const analysisMs: number[] = [];
    const queryMs: number[] = [];
    const baselineMs: number[] = [];
    for (let run = 0; run < options.runs; run++) {
      // Interleaved, so a noisy neighbour slows both sides of the ratio alike.
      let started = performance.now();
      for (const sql of BASELINE_SQL) await query.run(sql);
      baselineMs.push(performance.now() - started);
      started = performance.now();
      const timed = await analyzeExperiment(ports, BENCH_EXPERIMENT_ID, { store: false, to: BENCH_ANALYSIS_TO });
      analysisMs.push(performance.now() - started);
      queryMs.push(timed.queryMs);
      progress(`analysis run ${run + 1}/${options.runs}: ${(analysisMs.at(-1)! / 1000).toFixed(2)} s (engine ${(timed.queryMs / 1000).toFixed(2)} s), baseline scan ${(baselineMs.at(-1)! / 1000).toFixed(2)} s`);
    }
    const started = performance.now();
    const analysis = await analyzeExperiment(ports, BENCH_EXPERIMENT_ID, { store: true, to: BENCH_ANALYSIS_TO });
    const storedMs = performance.now() - started;
    return { archive, runs: options.runs, analysisMs, queryMs, baselineMs, storedMs, analysis };
  } finally {
    await query.close();
    local.close();
  }
}

/** The medians of a figures object, for printing. */
export function analysisMedians(f: AnalysisFigures): { analysisMs: number; queryMs: number; baselineMs: number } {
  return { analysisMs: median(f.analysisMs), queryMs: median(f.queryMs), baselineMs: median(f.baselineMs) };
}
