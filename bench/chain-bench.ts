/**
 * The LLM path of `npm run bench:classify`: signals through the chain end to end — local classifier, then the
 * pipeline's judge (`judgeSignal`) over real HTTP for the escalated ones — against a SIMULATED judge
 * (`simulated-judge.ts`) with no model latency (so the figure is the chain's own overhead: prompt building, HTTP,
 * JSON, checks) and with a fixed latency (so the figure shows how concurrency hides a model's latency).
 *
 * Env: BENCH_CHAIN_SIGNALS (default 1,000), BENCH_CHAIN_CONCURRENCY (default 16), BENCH_CHAIN_LATENCY_MS (default 200).
 */
import { createModel } from '../lib/models/create-model.ts';
import { judgeSignal } from '../lib/modes/judge-signal.ts';
import { readLabelledSet } from '../lib/modes/classifier/labelled-set.ts';
import { defaultTaxonomy } from '../lib/modes/taxonomy/taxonomy.ts';
import type { benchLocal } from './classify.ts';
import { textOf } from './eval-classifier.ts';
import { startSimulatedJudge } from './simulated-judge.ts';

const SIGNALS = Number(process.env.BENCH_CHAIN_SIGNALS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CHAIN_CONCURRENCY ?? 16);
const LATENCY_MS = Number(process.env.BENCH_CHAIN_LATENCY_MS ?? 200);

interface ChainRun {
  signals: number;
  escalated: number;
  judgeCalls: number;
  seconds: number;
}

async function runChain(local: ReturnType<typeof benchLocal>, delayMs: number, signals: number): Promise<ChainRun> {
  const records = readLabelledSet();
  const oracle = new Map(records.map((r) => [textOf(r), r.modes]));
  const judge = await startSimulatedJudge(oracle, local.model.modes, { accuracy: 0.85, delayMs });
  try {
    const llm = createModel(judge.spec, { apiKey: 'simulated' });
    const taxonomy = defaultTaxonomy();
    const texts = records.map(textOf);
    let next = 0;
    let escalated = 0;
    const start = performance.now();
    const worker = async (): Promise<void> => {
      while (next < signals) {
        const text = texts[next++ % texts.length]!;
        const c = local.model.classify(text);
        if (c.escalate) {
          escalated++;
          await judgeSignal(llm, taxonomy, { comment: text, rating: 'down', signalKind: 'comment' });
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return { signals, escalated, judgeCalls: judge.server.chatRequests().length, seconds: (performance.now() - start) / 1000 };
  } finally {
    await judge.close();
  }
}

export async function benchChain(local: ReturnType<typeof benchLocal>): Promise<string[]> {
  const fast = await runChain(local, 0, SIGNALS);
  const slow = await runChain(local, LATENCY_MS, Math.min(SIGNALS, 300));
  const line = (label: string, r: ChainRun) =>
    `  ${label}: ${(r.signals / r.seconds).toFixed(0)} signals/s end to end (${r.signals} signals, ${(100 * r.escalated / r.signals).toFixed(1)}% escalated, ${r.judgeCalls} judge calls, ${(r.judgeCalls / r.seconds).toFixed(0)} calls/s)`;
  return [
    `LLM path: local classifier + pipeline judge (judgeSignal) over HTTP to a SIMULATED judge (scripted model server), concurrency ${CONCURRENCY}`,
    line('no model latency   ', fast),
    line(`${LATENCY_MS} ms per answer  `, slow),
    '  (escalation share here is over the whole labelled set, train items included, which the model has seen; the held-out share is above)',
  ];
}
