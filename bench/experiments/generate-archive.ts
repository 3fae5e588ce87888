/**
 * The analysis benchmark's data: a raw archive of exposures and metric events for one two-arm experiment, written as
 * JSON Lines under `<blobsRoot>/raw/exposures/tenant=default/dt=…/` and `…/raw/metrics/…` exactly as the processor
 * writes them (`ExposureRow`, `MetricRow`), so `DuckDbQuery` and `analyzeExperiment` read it as they read real data.
 *
 * Streamed (one buffered write stream per table and day), never one giant string; seeded, so the same sizes give the
 * same files, and a marker file lets a later run reuse them. Users have heterogeneous base rates (an acceptance
 * propensity and a cost scale each), repeat turns (1–3 exposures), a pre-period cost (the CUPED covariate), and a
 * true effect: the treatment raises acceptance by 5% and lowers cost by 3% (relative).
 *
 * @example
 * const archive = await ensureBenchArchive(join(dataDir, 'blobs'), { units: 1_000_000, events: 10_000_000 });
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ExperimentInput } from '../../lib/experiments/schemas.ts';
import { mulberry32 } from '../../lib/shared/seeded-random.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
export const BENCH_TENANT = 'default';
export const BENCH_EXPERIMENT_ID = 'bench-exp';
export const BENCH_CHECKPOINTS = { control: 'bench-ckpt-a', treatment: 'bench-ckpt-b' } as const;
/** The experiment's start; exposures fall in the 6 days after it, metric events up to 2 days later. */
export const BENCH_STARTED_AT = new Date(Date.UTC(2026, 10, 1));
/** The end of the window the analysis reads. */
export const BENCH_ANALYSIS_TO = new Date(BENCH_STARTED_AT.getTime() + 8 * DAY_MS);
/** The true effects the data carries (relative). */
export const BENCH_TRUE_EFFECT = { accepted: 0.05, cost_usd: -0.03 } as const;
const FAILURE_MODE_METRIC = 'failure_mode.wrong-tool';
const MARKER_FILE = 'bench-archive.json';
const ARCHIVE_VERSION = 1;
const FLUSH_CHARS = 1 << 20;

/** The experiment the archive belongs to: built-in metrics of all three kinds, so every aggregation path runs. */
export function benchExperimentInput(unitsPerArm: number): ExperimentInput {
  return {
    id: BENCH_EXPERIMENT_ID,
    name: 'bench: acceptance and cost, 1M users',
    unitType: 'user',
    arms: [
      { id: 'control', checkpoint: BENCH_CHECKPOINTS.control, control: true },
      { id: 'treatment', checkpoint: BENCH_CHECKPOINTS.treatment },
    ],
    metrics: {
      primary: 'accepted',
      secondary: ['cost_usd', 'tokens'],
      guardrails: [{ metric: 'latency_ms_per_turn', maxRegression: 0.05 }],
    },
    plannedUnitsPerArm: Math.max(1, unitsPerArm),
    stoppingRule: { kind: 'sequential' },
    cupedPreDays: 14,
  };
}

export interface BenchArchive {
  units: number;
  events: number;
  exposures: number;
  /** Bytes of JSON Lines written (metrics + exposures). */
  bytes: number;
  /** Whether the files were already there from an earlier run. */
  reused: boolean;
  /** Seconds it took to write them (0 when reused). */
  seconds: number;
}

/** Writes the archive under `blobsRoot` unless a complete one of the same sizes is there; returns what it holds. */
export async function ensureBenchArchive(blobsRoot: string, sizes: { units: number; events: number }): Promise<BenchArchive> {
  const marker = join(blobsRoot, MARKER_FILE);
  try {
    const found = JSON.parse(readFileSync(marker, 'utf8')) as Omit<BenchArchive, 'reused' | 'seconds'> & { version: number };
    if (found.version === ARCHIVE_VERSION && found.units === sizes.units && found.events === sizes.events) {
      return { units: found.units, events: found.events, exposures: found.exposures, bytes: found.bytes, reused: true, seconds: 0 };
    }
  } catch {
    // none yet, or half written: write it below
  }
  const started = performance.now();
  rmSync(join(blobsRoot, 'raw'), { recursive: true, force: true });
  rmSync(marker, { force: true });
  const written = await writeArchive(blobsRoot, sizes);
  writeFileSync(marker, `${JSON.stringify({ version: ARCHIVE_VERSION, ...written })}\n`);
  return { ...written, reused: false, seconds: (performance.now() - started) / 1000 };
}


/** One buffered JSON Lines file per table and day; a flush waits for the stream to drain (backpressure). */
class DayFiles {
  readonly #streams = new Map<string, { stream: WriteStream; buffer: string }>();
  readonly #root: string;
  bytes = 0;
  constructor(root: string) {
    this.#root = root;
  }

  /** Buffers one line; returns a promise only when the buffer was flushed (await it: backpressure). */
  add(day: string, line: string): Promise<void> | undefined {
    let file = this.#streams.get(day);
    if (!file) {
      const dir = join(this.#root, `dt=${day}`);
      mkdirSync(dir, { recursive: true });
      file = { stream: createWriteStream(join(dir, 'bench-0.jsonl')), buffer: '' };
      this.#streams.set(day, file);
    }
    file.buffer += line;
    return file.buffer.length >= FLUSH_CHARS ? this.#flush(file) : undefined;
  }

  async #flush(file: { stream: WriteStream; buffer: string }): Promise<void> {
    const chunk = file.buffer;
    file.buffer = '';
    this.bytes += Buffer.byteLength(chunk);
    if (!file.stream.write(chunk)) await once(file.stream, 'drain');
  }

  async close(): Promise<void> {
    for (const file of this.#streams.values()) {
      await this.#flush(file);
      file.stream.end();
      await once(file.stream, 'finish');
    }
  }
}

const POST_METRICS = ['latency_ms', 'tokens', 'latency_ms', 'cost_usd', 'accepted', 'latency_ms', 'tokens', 'latency_ms', 'cost_usd'] as const;

async function writeArchive(blobsRoot: string, sizes: { units: number; events: number }): Promise<Omit<BenchArchive, 'reused' | 'seconds'>> {
  const exposureFiles = new DayFiles(join(blobsRoot, 'raw', 'exposures', `tenant=${BENCH_TENANT}`));
  const metricFiles = new DayFiles(join(blobsRoot, 'raw', 'metrics', `tenant=${BENCH_TENANT}`));
  const random = mulberry32(20261204);
  const start = BENCH_STARTED_AT.getTime();
  const day = DAY_MS;
  let exposures = 0;
  let events = 0;
  for (let i = 0; i < sizes.units; i++) {
    const treated = random() < 0.5;
    const arm = treated ? 'treatment' : 'control';
    const model = treated ? BENCH_CHECKPOINTS.treatment : BENCH_CHECKPOINTS.control;
    const propensity = 0.1 + 0.5 * random();
    const costScale = 0.5 + 1.5 * random();
    const first = start + Math.floor(random() * 6 * day);
    const user = `u${i}`;
    const turns = 1 + (i % 3);
    for (let t = 0; t < turns; t++) {
      const at = new Date(first + t * 600_000).toISOString();
      const flushed = exposureFiles.add(
        at.slice(0, 10),
        `{"id":"x${i}-${t}","experiment":"${BENCH_EXPERIMENT_ID}","arm":"${arm}","checkpoint":"${model}","unit_type":"user","unit_id":"${user}","session_id":"s${i}","turn_id":"t${t}","occurred_at":"${at}","received_at":"${at}"}\n`,
      );
      if (flushed) await flushed;
      exposures++;
    }
    // This unit's share of the events, so the total is exactly `sizes.events`.
    const count = Math.floor(((i + 1) * sizes.events) / sizes.units) - Math.floor((i * sizes.events) / sizes.units);
    for (let j = 0; j < count; j++) {
      let metric: string;
      let value: number;
      let when: number;
      if (j === 0) {
        // The pre-period: the covariate CUPED reads (cost before the first exposure, same scale as after it).
        metric = 'cost_usd';
        value = costScale * 0.02 * (0.8 + 0.4 * random());
        when = first - Math.floor((1 + 5 * random()) * day);
      } else {
        metric = random() < 0.02 ? FAILURE_MODE_METRIC : POST_METRICS[(j - 1) % POST_METRICS.length]!;
        when = first + j * 60_000 + 1_000;
        if (metric === 'accepted') value = random() < propensity * (treated ? 1 + BENCH_TRUE_EFFECT.accepted : 1) ? 1 : 0;
        else if (metric === 'cost_usd') value = costScale * 0.02 * (0.8 + 0.4 * random()) * (treated ? 1 + BENCH_TRUE_EFFECT.cost_usd : 1);
        else if (metric === 'tokens') value = Math.round(costScale * 1000 * (0.5 + random()));
        else if (metric === 'latency_ms') value = Math.round(600 + 800 * random());
        else value = 1;
      }
      const at = new Date(when).toISOString();
      const flushed = metricFiles.add(
        at.slice(0, 10),
        `{"id":"m${i}-${j}","metric":"${metric}","value":${value},"scope":"turn","user_id":"${user}","workspace_id":null,"model":"${model}","experiment":"${BENCH_EXPERIMENT_ID}","arm":"${arm}","session_id":"s${i}","turn_id":null,"occurred_at":"${at}","received_at":"${at}"}\n`,
      );
      if (flushed) await flushed;
      events++;
    }
  }
  await Promise.all([exposureFiles.close(), metricFiles.close()]);
  return { units: sizes.units, events, exposures, bytes: exposureFiles.bytes + metricFiles.bytes };
}
