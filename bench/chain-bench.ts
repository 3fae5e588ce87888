/**
 * The LLM path of `npm run bench:classify`: signals through the pipeline's chain end to end (`classifySignal`: local
 * classifier, the LLM judge over real HTTP for escalated ones, label and tally records written to the local SQLite
 * store) against a SIMULATED judge (`simulated-judge.ts`): with no model latency (the chain's own overhead: prompt,
 * HTTP, JSON, checks, record writes) and with a fixed latency (how concurrency hides a model's latency).
 *
 * Env: BENCH_CHAIN_SIGNALS (default 1,000), BENCH_CHAIN_CONCURRENCY (default 16), BENCH_CHAIN_LATENCY_MS (default 200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { createModel } from '../lib/models/create-model.ts';
import { readLabelledSet } from '../lib/modes/classifier/labelled-set.ts';
import type { LocalClassifier } from '../lib/modes/classifier/local-classifier.ts';
import { classifySignal, type ChainOutcome } from '../lib/modes/classify-signal.ts';
import { fixedClassifier } from '../lib/modes/current-classifier.ts';
import { ensureTaxonomy } from '../lib/modes/taxonomy/taxonomy-store.ts';
import { labelledSignal } from './chain-eval.ts';
import { textOf } from './support/classifier-report.ts';
import { startSimulatedJudge } from './simulated-judge.ts';

const SIGNALS = Number(process.env.BENCH_CHAIN_SIGNALS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CHAIN_CONCURRENCY ?? 16);
const LATENCY_MS = Number(process.env.BENCH_CHAIN_LATENCY_MS ?? 200);

interface ChainRun {
  signals: number;
  outcomes: Partial<Record<ChainOutcome, number>>;
  judgeCalls: number;
  seconds: number;
}

async function runChain(local: { model: LocalClassifier }, delayMs: number, signals: number): Promise<ChainRun> {
  const records = readLabelledSet();
  const oracle = new Map(records.map((r) => [textOf(r), r.modes]));
  const judge = await startSimulatedJudge(oracle, local.model.modes, { accuracy: 0.85, delayMs });
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-chain-bench-'));
  const ports = openLocalPorts(dir);
  try {
    const taxonomy = await ensureTaxonomy(ports.records);
    const deps = { ports, classifier: fixedClassifier(local.model), judge: createModel(judge.spec, { apiKey: 'simulated' }) };
    const outcomes: Partial<Record<ChainOutcome, number>> = {};
    let next = 0;
    const start = performance.now();
    const worker = async (): Promise<void> => {
      while (next < signals) {
        const n = next++;
        const { outcome } = await classifySignal(deps, labelledSignal(records[n % records.length]!, `bench-${n}`), taxonomy);
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { signals, outcomes, judgeCalls: judge.server.chatRequests().length, seconds: (performance.now() - start) / 1000 };
  } finally {
    ports.close();
    rmSync(dir, { recursive: true, force: true });
    await judge.close();
  }
}

export async function benchChain(local: { model: LocalClassifier }): Promise<string[]> {
  const fast = await runChain(local, 0, SIGNALS);
  const slow = await runChain(local, LATENCY_MS, Math.min(SIGNALS, 300));
  const line = (label: string, r: ChainRun) => {
    const asked = (r.outcomes.judge ?? 0) + (r.outcomes.review ?? 0);
    return (
      `  ${label}: ${(r.signals / r.seconds).toFixed(0)} signals/s end to end (${r.signals} signals: ${r.outcomes.local ?? 0} local, ` +
      `${r.outcomes.judge ?? 0} judge, ${r.outcomes.review ?? 0} review; ${(100 * asked / r.signals).toFixed(1)}% escalated; ` +
      `${r.judgeCalls} judge calls, ${(r.judgeCalls / r.seconds).toFixed(0)} calls/s)`
    );
  };
  return [
    `LLM path: the pipeline's chain (classifySignal, local SQLite store) with the judge over HTTP to a SIMULATED judge (scripted model server), concurrency ${CONCURRENCY}`,
    line('no model latency', fast),
    line(`${LATENCY_MS} ms per answer`, slow),
    '  (the escalation share here is over the whole labelled set, train items included, which the model has seen; the held-out share is above)',
  ];
}
