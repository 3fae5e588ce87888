/**
 * Assignment latency and throughput: the pure `assignUnit` (holdout, ramp and arm hashes of one unit), the in-memory
 * cache path that answers `POST /v1/assignments` (`assignUnits`: the request validated, the running experiments held in
 * memory, no record read per request), 1 and 100 units per request, and the baseline: a bare FNV-1a of the same strings (`seed + unitId`), the least any hashing assignment can cost.
 *
 * Latency: every call timed on its own with `process.hrtime.bigint()` (the timer's own cost, measured the same way on
 * an empty body, is printed beside it); throughput: untimed calls in a tight loop. Each run goes over the same unit
 * ids; the figures are medians over the runs.
 *
 * @example
 * const figures = await benchAssignment({ units: 200_000, runs: 7, dataDir: mkdtempSync(join(tmpdir(), 'bench-')) });
 */
import { openLocalPorts } from '../../lib/drivers/local/local-ports.ts';
import { AssignmentCache } from '../../lib/experiments/assignment/assignment-cache.ts';
import { assignUnit } from '../../lib/experiments/assignment/assign-unit.ts';
import { assignUnits } from '../../lib/experiments/assignment/assign-units.ts';
import { createExperimentRecord } from '../../lib/experiments/experiment-store.ts';
import { ExperimentInput, type ExperimentRecord } from '../../lib/experiments/schemas.ts';
import { median, percentile } from './figures.ts';

export interface LatencyFigures {
  name: string;
  /** Nanoseconds per call, medians over the runs of each run's percentile. */
  p50Ns: number;
  p99Ns: number;
  /** Assignments (hashes for the baseline) per second in an untimed loop (median over runs). */
  perSecond: number;
}

export interface AssignmentFigures {
  rows: LatencyFigures[];
  /** The cost of the timer itself (an empty timed body), p50 ns. */
  timerNs: number;
  units: number;
  runs: number;
  /** Record reloads the cache made while it was timed (past half its 5 s age it reloads in the background). */
  cacheReloads: number;
}

/** 32-bit FNV-1a over UTF-16 code units: the baseline, written out here so it owes nothing to the code measured. */
function bareFnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const NOW = new Date('2026-12-01T00:00:00.000Z');

/** A running experiment with every hash in play: a holdout, a ramp at its second step, three arms. */
function benchExperimentRecord(id: string): ExperimentRecord {
  const definition = ExperimentInput.parse({
    id,
    name: `assignment bench ${id}`,
    unitType: 'user',
    arms: [
      { id: 'control', checkpoint: 'bench-ckpt-a', control: true, weight: 2 },
      { id: 'treatment', checkpoint: 'bench-ckpt-b', weight: 1 },
      { id: 'treatment-2', checkpoint: 'bench-ckpt-c', weight: 1, config: { temperature: 0.2 } },
    ],
    metrics: { primary: 'accepted', secondary: [], guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }] },
    plannedUnitsPerArm: 10_000,
    holdout: 0.05,
    ramp: [{ percent: 10, minHours: 0 }, { percent: 50, minHours: 0 }, { percent: 100, minHours: 0 }],
  });
  return {
    definition,
    status: 'running',
    plannedUnitsPerArm: 10_000,
    rampStep: 1,
    rampStepSince: NOW.toISOString(),
    stoppedArms: [],
    origin: { kind: 'person', by: 'bench' },
    createdAt: NOW.toISOString(),
    startedAt: NOW.toISOString(),
    revision: 0,
  };
}

/** Times `fn` on every unit, one call at a time; returns each run's p50/p99 and an untimed throughput pass. */
function measure(name: string, unitIds: readonly string[], runs: number, fn: (unitId: string) => unknown): LatencyFigures {
  const p50s: number[] = [];
  const p99s: number[] = [];
  const rates: number[] = [];
  const samples = new Float64Array(unitIds.length);
  let sink = 0;
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < unitIds.length; i++) {
      const t0 = process.hrtime.bigint();
      const out = fn(unitIds[i]!);
      samples[i] = Number(process.hrtime.bigint() - t0);
      // Keep the result alive so the call is not optimised away.
      if (out === undefined) sink++;
    }
    p50s.push(percentile(Array.from(samples), 50));
    p99s.push(percentile(Array.from(samples), 99));
    const started = performance.now();
    for (let i = 0; i < unitIds.length; i++) if (fn(unitIds[i]!) === undefined) sink++;
    rates.push(unitIds.length / ((performance.now() - started) / 1000));
  }
  if (sink < 0) throw new Error('unreachable');
  return { name, p50Ns: median(p50s), p99Ns: median(p99s), perSecond: median(rates) };
}

/**
 * `measure` for the request path (`assignUnits` is async): one call per `batch` units, timed alone; latency is per
 * call (per request), throughput in assignments (units) per second.
 */
async function measureAsync(name: string, unitIds: readonly string[], runs: number, batch: number, fn: (units: string[]) => Promise<unknown>): Promise<LatencyFigures> {
  const batches: string[][] = [];
  for (let i = 0; i + batch <= unitIds.length; i += batch) batches.push(unitIds.slice(i, i + batch));
  const p50s: number[] = [];
  const p99s: number[] = [];
  const rates: number[] = [];
  const samples = new Float64Array(batches.length);
  let sink = 0;
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < batches.length; i++) {
      const t0 = process.hrtime.bigint();
      const out = await fn(batches[i]!);
      samples[i] = Number(process.hrtime.bigint() - t0);
      if (out === undefined) sink++;
    }
    p50s.push(percentile(Array.from(samples), 50));
    p99s.push(percentile(Array.from(samples), 99));
    const started = performance.now();
    for (const units of batches) if ((await fn(units)) === undefined) sink++;
    rates.push((batches.length * batch) / ((performance.now() - started) / 1000));
  }
  if (sink < 0) throw new Error('unreachable');
  return { name, p50Ns: median(p50s), p99Ns: median(p99s), perSecond: median(rates) };
}

/**
 * The cache path: three running experiments loaded from records into memory, asked as `POST /v1/assignments` asks
 * (the request validated, the experiment named), less the HTTP.
 */
async function benchCachePath(unitIds: readonly string[], options: { runs: number; dataDir: string }): Promise<{ rows: LatencyFigures[]; reloads: number }> {
  const ports = openLocalPorts(options.dataDir);
  try {
    for (const id of ['bench-assign', 'bench-assign-2', 'bench-assign-3']) await createExperimentRecord(ports.records, benchExperimentRecord(id), 'bench', NOW);
    const cache = new AssignmentCache(ports.records);
    await cache.reload();
    const ask = (units: string[]) => assignUnits(cache, { unitType: 'user', unitIds: units, experiments: ['bench-assign'] });
    for (let i = 0; i < 2_000; i++) await ask([unitIds[i]!]);
    const loaded = cache.loads;
    const rows = [
      await measureAsync('assignUnits via cache, 1 unit per request', unitIds, options.runs, 1, ask),
      await measureAsync('assignUnits via cache, 100 units per request (latency per request)', unitIds, options.runs, 100, ask),
    ];
    return { rows, reloads: cache.loads - loaded };
  } finally {
    ports.close();
  }
}

/** The assignment figures for `units` distinct unit ids, `runs` runs each. */
export async function benchAssignment(options: { units: number; runs: number; dataDir: string }): Promise<AssignmentFigures> {
  const experiment = benchExperimentRecord('bench-assign');
  const seed = experiment.definition.seed ?? experiment.definition.id;
  const unitIds = Array.from({ length: options.units }, (_, i) => `user-${i.toString(36)}-${(i * 2654435761) >>> 0}`);
  // Warm-up: JIT both paths before any timing.
  for (let i = 0; i < Math.min(unitIds.length, 20_000); i++) {
    assignUnit(experiment, unitIds[i]!);
    bareFnv1a(seed + unitIds[i]!);
  }
  const timer = measure('timer alone', unitIds, options.runs, (u) => u);
  const rows = [measure('bare FNV-1a (baseline)', unitIds, options.runs, (u) => bareFnv1a(seed + u)), measure('assignUnit (pure)', unitIds, options.runs, (u) => assignUnit(experiment, u))];

  const cache = await benchCachePath(unitIds, options);
  rows.push(...cache.rows);
  return { rows, timerNs: timer.p50Ns, units: options.units, runs: options.runs, cacheReloads: cache.reloads };
}
