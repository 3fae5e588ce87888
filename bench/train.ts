/**
 * `npm run bench:train`: the training path's throughput on CPU, in one table.
 *
 * - The policy trainer (batch-images/trainer/bench/train_bench.py, run as a child process: `FLYWHEEL_PYTHON`, default
 *   python3): step time and tokens/s of `PolicyTrainer.step()` — teacher prefill with hints, forward, the outcome,
 *   decision-point and teacher-choice terms, backward, AdamW — for the tiny model (~0.1M parameters) and a random
 *   ~50M-parameter one, against a plain SFT step (forward, cross-entropy, backward, AdamW) on the same batch measured
 *   in the same run: the ratio is what the policy terms cost. Medians of BENCH_RUNS (default 5) after a warm-up.
 * - The dataset builder (`benchDatasetBuilder` from bench/dataset-builder.ts): tokens/s from stored attempts to
 *   Parquet shards on the local ports.
 *
 * The GPU figures (a 0.5B-shaped model: tokens/s, MFU, peak memory, the vLLM mismatch) come from a separate prepared
 * script, bench/gpu/train-mfu.py, run on a GPU machine.
 *
 * Prints the table and one JSON line (`{"bench":"train",...}`). Env: BENCH_RUNS, BENCH_TRAIN_SHAPES (default
 * `tiny,50m`), FLYWHEEL_PYTHON, and the dataset builder's BENCH_DATASET_ATTEMPTS / BENCH_DATASET_TURNS.
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchDatasetBuilder } from './dataset-builder.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const SHAPES = process.env.BENCH_TRAIN_SHAPES ?? 'tiny,50m';
const SCRIPT = fileURLToPath(new URL('../batch-images/trainer/bench/train_bench.py', import.meta.url));

interface ShapeResult {
  shape: string;
  params: number;
  rows: number;
  tokensPerStep: number;
  policyStepSeconds: number;
  policyTokensPerSecond: number;
  baselineStepSeconds: number;
  baselineTokensPerSecond: number;
  ratio: number;
}

interface PythonBench {
  bench: 'train-python';
  threads: number;
  repeats: number;
  torch: string;
  shapes: ShapeResult[];
}

/** Runs the Python bench and returns its JSON line; its stderr passes through (progress, warnings). */
async function pythonBench(): Promise<PythonBench> {
  const child = spawn(process.env.FLYWHEEL_PYTHON || 'python3', [SCRIPT, '--json', '--repeats', String(RUNS), '--shapes', SHAPES], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`train_bench.py exited ${code}: ${out.slice(-2000)}`);
  return JSON.parse(line) as PythonBench;
}

const ms = (s: number) => `${(s * 1000).toFixed(s < 1 ? 1 : 0)} ms`;
const rate = (x: number) => Math.round(x).toLocaleString('en');

async function main(): Promise<void> {
  const py = await pythonBench();
  const dataset = await benchDatasetBuilder({ runs: Math.min(RUNS, 3) });
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  let out = `\ntraining on CPU (${cpus().length} CPUs, torch ${py.torch} with ${py.threads} threads, load ${load}; medians of ${py.repeats} after a warm-up)\n`;
  out += '| what | params | tokens/step | step (median) | tokens/s | baseline: plain SFT step | baseline tokens/s | ratio |\n';
  out += '| --- | --- | --- | --- | --- | --- | --- | --- |\n';
  for (const r of py.shapes) {
    out += `| policy step, ${r.shape} model | ${(r.params / 1e6).toFixed(2)}M | ${r.tokensPerStep} (${r.rows} rows) | ${ms(r.policyStepSeconds)} | ${rate(r.policyTokensPerSecond)} | ${ms(r.baselineStepSeconds)} | ${rate(r.baselineTokensPerSecond)} | ${r.ratio.toFixed(2)} |\n`;
  }
  out += `| dataset builder (${dataset.attempts} attempts → ${dataset.rows} rows, ${dataset.shards} shards) | — | ${dataset.tokens} | ${dataset.medianSeconds} s | ${rate(dataset.tokensPerSecond)} | — | — | — |\n`;
  process.stdout.write(out);
  process.stdout.write(`${JSON.stringify({ bench: 'train', cpus: cpus().length, loadavg: loadavg(), trainer: py, datasetBuilder: dataset })}\n`);
}

await main();
