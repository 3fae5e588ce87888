/**
 * The dataset builder's throughput (part of `npm run bench:train`; alone: `node bench/dataset-builder.ts`): tokens per
 * second of `buildDataset` (lib/training/datasets/) from stored attempts to Parquet shards and manifest, on the local
 * ports (SQLite records, file blobs).
 *
 * BENCH_DATASET_ATTEMPTS attempts (default 200) of one run, each a trajectory of BENCH_DATASET_TURNS turns (default 8)
 * with token ids: a 512-token first prompt, then per turn a 256-token completion and a 512-token tool output, merged
 * into one row per attempt (6,144 tokens at 8 turns), one decision span per attempt. The median of BENCH_RUNS builds
 * (default 3) of the same dataset id (each one rebuilds it all: read, parse, merge, encode, write).
 *
 * Prints a line and one JSON line (`{"bench":"dataset-builder",...}`); `benchDatasetBuilder()` returns the figures.
 */
import { cpus } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { buildDataset } from '../lib/training/datasets/build-dataset.ts';
import { decision, putAttempt, scriptedTrajectory, type TurnTokens } from '../test/training/datasets-support.ts';

export interface DatasetBuilderBench {
  attempts: number;
  rows: number;
  tokens: number;
  shards: number;
  medianSeconds: number;
  tokensPerSecond: number;
  rowsPerSecond: number;
}

function turns(count: number, seed: number): TurnTokens[] {
  const out: TurnTokens[] = [];
  let ids = Array.from({ length: 512 }, (_, i) => (i * 7 + seed) % 256);
  for (let t = 0; t < count; t++) {
    const completion = Array.from({ length: 256 }, (_, i) => (i * 13 + t + seed) % 256);
    out.push({ prompt: ids, completion, logprobs: completion.map((_, i) => -0.01 * ((i % 50) + 1)) });
    ids = [...ids, ...completion, ...Array.from({ length: 512 }, (_, i) => (i * 3 + t) % 256)];
  }
  return out;
}

/**
 * Builds the benchmark's dataset BENCH_RUNS times and prints its tokens per second.
 *
 * @example
 * const { tokensPerSecond } = await benchDatasetBuilder();
 */
export async function benchDatasetBuilder(options: { attempts?: number; turns?: number; runs?: number } = {}): Promise<DatasetBuilderBench> {
  const attempts = options.attempts ?? Number(process.env.BENCH_DATASET_ATTEMPTS ?? 200);
  const turnCount = options.turns ?? Number(process.env.BENCH_DATASET_TURNS ?? 8);
  const runs = options.runs ?? Number(process.env.BENCH_RUNS ?? 3);
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-bench-dataset-'));
  const ports = openLocalPorts(dir);
  try {
    for (let a = 0; a < attempts; a++) {
      const attemptId = `bench.t${a % 20}.${Math.floor(a / 20)}`;
      await putAttempt(ports, { runId: 'bench', taskId: `t${a % 20}`, suite: 'bench', n: Math.floor(a / 20), status: a % 3 === 0 ? 'passed' : 'failed', trajectory: scriptedTrajectory(attemptId, turns(turnCount, a), { taskId: `t${a % 20}`, checkpoint: 'tiny:0' }) });
    }
    const decisionsOf = async (attemptId: string) => [decision(attemptId, 2, 1, { tokenSpan: { start: 3, end: 9 } })];
    const seconds: number[] = [];
    let manifest: Awaited<ReturnType<typeof buildDataset>> | undefined;
    for (let r = 0; r < runs; r++) {
      const started = performance.now();
      manifest = await buildDataset(ports, { datasetId: 'bench', selection: { runs: ['bench'] } }, { decisionsOf });
      seconds.push((performance.now() - started) / 1000);
    }
    const sorted = [...seconds].sort((x, y) => x - y);
    const medianSeconds = sorted[Math.floor(sorted.length / 2)]!;
    const m = manifest!;
    const result: DatasetBuilderBench = {
      attempts,
      rows: m.rows,
      tokens: m.tokens,
      shards: m.shards.length,
      medianSeconds: Number(medianSeconds.toFixed(3)),
      tokensPerSecond: Math.round(m.tokens / medianSeconds),
      rowsPerSecond: Math.round(m.rows / medianSeconds),
    };
    console.log(`dataset builder: ${result.tokens.toLocaleString('en')} tokens in ${result.rows} rows (${result.shards} shards) in ${result.medianSeconds} s → ${result.tokensPerSecond.toLocaleString('en')} tokens/s (${cpus().length} CPUs, median of ${runs})`);
    console.log(JSON.stringify({ bench: 'dataset-builder', ...result }));
    return result;
  } finally {
    ports.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await benchDatasetBuilder();
