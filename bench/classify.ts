/**
 * `npm run bench:classify`: how many signals per second the local failure-mode classifier labels on this machine
 * (median of runs), per-call latency, the share it escalates at its chosen threshold, and the cost of training,
 * serialising and loading a model. The LLM path (local + the pipeline's judge through a scripted model server) is
 * measured by `chain-bench.ts`.
 *
 * Signals are the labelled set's texts (comments and reports, 20–600 characters) cycled; every call does the full
 * work (tokenise, TF-IDF, 8 logistic regressions, calibration), nothing is cached.
 *
 * Env: BENCH_SECONDS (per run, default 2), BENCH_RUNS (default 5). Aim: ≥ 2,000 signals/s.
 */
import { fileURLToPath } from 'node:url';
import { readLabelledSet, toLabelledExamples } from '../lib/modes/classifier/labelled-set.ts';
import { loadLocalClassifier, trainLocalClassifier, type LocalClassifier } from '../lib/modes/classifier/local-classifier.ts';
import { defaultTaxonomy } from '../lib/modes/taxonomy/taxonomy.ts';
import { benchChain } from './chain-bench.ts';
import { textOf } from './support/classifier-report.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const AIM = 2000;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const pctile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

export interface LocalBench {
  signalsPerSecond: number;
  runs: number[];
  /** The same on ~2,000-character texts (long reports). */
  longSignalsPerSecond: number;
  latencyMicros: { p50: number; p99: number };
  escalatedShare: number;
  heldoutTexts: number;
  trainExamples: number;
  escalationThreshold: number;
  trainSeconds: number;
  modelJsonBytes: number;
  loadMillis: number;
  meanChars: number;
}

export function benchLocal(): { result: LocalBench; model: LocalClassifier; texts: string[] } {
  const records = readLabelledSet();
  const t0 = performance.now();
  const model = trainLocalClassifier(toLabelledExamples(records.filter((r) => r.split === 'train')), defaultTaxonomy());
  const trainSeconds = (performance.now() - t0) / 1000;
  const json = JSON.stringify(model);
  const t1 = performance.now();
  const loaded = loadLocalClassifier(JSON.parse(json));
  const loadMillis = performance.now() - t1;
  const texts = records.map(textOf);

  const heldout = records.filter((r) => r.split === 'heldout').map(textOf);
  const long = texts.map((_, i) => Array.from({ length: 18 }, (_, k) => texts[(i + k * 23) % texts.length]).join('\n\n'));

  const timed = (corpus: string[]): number[] => {
    // Warm-up (JIT), then timed runs.
    for (let i = 0; i < 1000; i++) loaded.classify(corpus[i % corpus.length]!);
    const runs: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      let n = 0;
      const start = performance.now();
      const end = start + SECONDS * 1000;
      let now = start;
      while (now < end) {
        for (let k = 0; k < 50; k++) loaded.classify(corpus[(n + k) % corpus.length]!);
        n += 50;
        now = performance.now();
      }
      runs.push(n / ((now - start) / 1000));
    }
    return runs;
  };
  const runs = timed(texts);
  const longRuns = timed(long);
  const latencies: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const s = performance.now();
    loaded.classify(texts[i % texts.length]!);
    latencies.push((performance.now() - s) * 1000);
  }
  // Escalation is measured on held-out texts only: the model has seen the train split and is surer of it.
  const escalated = heldout.filter((t) => loaded.classify(t).escalate).length;
  return {
    model: loaded,
    texts,
    result: {
      signalsPerSecond: median(runs),
      runs,
      longSignalsPerSecond: median(longRuns),
      latencyMicros: { p50: pctile(latencies, 50), p99: pctile(latencies, 99) },
      escalatedShare: escalated / heldout.length,
      heldoutTexts: heldout.length,
      trainExamples: model.training.examples,
      escalationThreshold: loaded.escalationThreshold,
      trainSeconds,
      modelJsonBytes: Buffer.byteLength(json),
      loadMillis,
      meanChars: texts.reduce((a, t) => a + t.length, 0) / texts.length,
    },
  };
}

async function main(): Promise<void> {
  const local = benchLocal();
  const r = local.result;
  const lines = [
    `Local failure-mode classifier benchmark (${local.texts.length} labelled texts cycled, mean ${r.meanChars.toFixed(0)} chars; ${SECONDS} s × ${RUNS} runs, median)`,
    `  signals/s:        ${r.signalsPerSecond.toFixed(0)}  (runs: ${r.runs.map((x) => x.toFixed(0)).join(', ')}; aim ${AIM}: ${r.signalsPerSecond >= AIM ? 'met' : 'NOT met'})`,
    `  long (≈2,000-char reports): ${r.longSignalsPerSecond.toFixed(0)} signals/s`,
    `  latency per call: p50 ${r.latencyMicros.p50.toFixed(0)} µs, p99 ${r.latencyMicros.p99.toFixed(0)} µs`,
    `  escalated:        ${(100 * r.escalatedShare).toFixed(1)}% at confidence < ${r.escalationThreshold.toFixed(3)} on the ${r.heldoutTexts} held-out texts (threshold chosen on validation)`,
    `  training:         ${r.trainSeconds.toFixed(2)} s (5-fold CV + final fit, ${r.trainExamples} examples); model JSON ${(r.modelJsonBytes / 1024).toFixed(0)} KiB, loads in ${r.loadMillis.toFixed(1)} ms`,
  ];
  console.log(lines.join('\n'));
  console.log(['', ...(await benchChain(local))].join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
