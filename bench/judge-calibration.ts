/**
 * The time of one calibration report (`buildCalibrationReport`) over `labels` gold labels spread over `criteria`
 * criteria (10,000 labels = 2,500 items × 4 criteria by default), with a 1,000-resample bootstrap per criterion, a
 * double-labelled slice of 20% (the human ceiling, bootstrapped too), a test–retest run and lengths (length bias).
 * The scripted judge flips each gold label with probability 0.1. Composed into `npm run bench:judge`; run directly
 * (`node bench/judge-calibration.ts`) it prints the median of 5 runs.
 *
 * Env: BENCH_RUNS (default 5), BENCH_LABELS (default 10000), BENCH_RESAMPLES (default 1000).
 */
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../lib/judges/calibration/bootstrap.ts';
import { buildCalibrationReport } from '../lib/judges/calibration/build-calibration-report.ts';
import type { GoldItem, JudgeLabels } from '../lib/judges/schemas.ts';

export interface CalibrationBenchOptions {
  labels: number;
  resamples: number;
  criteria?: number;
  runs?: number;
}

export interface CalibrationBench {
  /** Wall time of each run, ms. */
  ms: number[];
  medianMs: number;
  labels: number;
  items: number;
  criteria: number;
  resamples: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function fixture(items: number, criteria: number): { gold: GoldItem[]; verdicts: Map<string, JudgeLabels>; retest: Map<string, JudgeLabels> } {
  const next = seededRandom(2026);
  const u = () => next() / 4294967296;
  const ids = Array.from({ length: criteria }, (_, c) => `criterion-${c}`);
  const flip = (l: string, p: number) => (u() < p ? (l === 'pass' ? 'fail' : 'pass') : l);
  const gold: GoldItem[] = Array.from({ length: items }, (_, i) => {
    const labels = Object.fromEntries(ids.map((id) => [id, u() < 0.1 ? 'not-applicable' : u() < 0.6 ? 'pass' : 'fail']));
    const item: GoldItem = {
      id: `item-${i}`,
      subject: { kind: 'attempt', runId: 'bench', attemptId: `attempt-${i}` },
      labels,
      annotators: ['bench@example.com'],
      length: 200 + Math.floor(u() * 5000),
    };
    if (i % 5 === 0) item.secondLabels = Object.fromEntries(ids.map((id) => [id, flip(labels[id]!, 0.05)]));
    return item;
  });
  const judge = () =>
    new Map(gold.map((g) => [g.id, { labels: Object.fromEntries(ids.map((id) => [id, flip(g.labels[id]!, 0.1)])), costUsd: 0.002, latencyMs: 150 + u() * 200 }]));
  return { gold, verdicts: judge(), retest: judge() };
}

/**
 * Times `buildCalibrationReport` over `labels` labels; one untimed warm-up run first.
 *
 * @example
 * const { medianMs } = await benchCalibration({ labels: 10_000, resamples: 1000 }); // ≈ 0.5 s on a laptop core
 */
export async function benchCalibration(options: CalibrationBenchOptions): Promise<CalibrationBench> {
  const criteria = options.criteria ?? 4;
  const runs = options.runs ?? 5;
  const items = Math.ceil(options.labels / criteria);
  const { gold, verdicts, retest } = fixture(items, criteria);
  const once = () =>
    buildCalibrationReport({
      id: 'bench',
      judge: { name: 'bench-judge', version: '000000000000' },
      goldSet: 'bench',
      createdAt: new Date(0).toISOString(),
      items: gold,
      verdicts,
      retest,
      resamples: options.resamples,
      seed: 1,
    });
  once();
  const ms: number[] = [];
  for (let r = 0; r < runs; r++) {
    const started = performance.now();
    once();
    ms.push(performance.now() - started);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { ms, medianMs: median(ms), labels: items * criteria, items, criteria, resamples: options.resamples };
}

async function main(): Promise<void> {
  const result = await benchCalibration({
    labels: Number(process.env.BENCH_LABELS ?? 10_000),
    resamples: Number(process.env.BENCH_RESAMPLES ?? 1000),
    runs: Number(process.env.BENCH_RUNS ?? 5),
  });
  process.stdout.write(
    `calibration report over ${result.labels} labels (${result.items} items × ${result.criteria} criteria, ${result.resamples} resamples): ` +
      `median ${result.medianMs.toFixed(0)} ms of ${result.ms.length} runs [${result.ms.map((m) => m.toFixed(0)).join(', ')}]\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
