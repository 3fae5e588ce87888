/**
 * The chain's quality on the held-out set, through the pipeline's own chain (`classifySignal`, local ports in a
 * temporary folder): the local classifier labels every item; escalated ones go to the LLM judge over real HTTP — a
 * SIMULATED judge (`simulated-judge.ts`) answering from the held-out labels with a set error rate; what the judge
 * cannot settle goes to the human review queue with the local labels as the best guess (a reviewer has not answered
 * yet, so those count as they are). Used by `eval-classifier.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalPorts } from '../lib/drivers/local/local-ports.ts';
import { createModel } from '../lib/models/create-model.ts';
import { calibration, multiLabelMetrics, type Calibration, type MultiLabelMetrics } from '../lib/modes/classifier/classification-metrics.ts';
import type { LabelledRecord } from '../lib/modes/classifier/labelled-set.ts';
import type { LocalClassifier } from '../lib/modes/classifier/local-classifier.ts';
import { classifySignal, type ChainOutcome } from '../lib/modes/classify-signal.ts';
import { fixedClassifier } from '../lib/modes/current-classifier.ts';
import { signalKeyOf } from '../lib/modes/record-keys.ts';
import type { Signal } from '../lib/modes/signal.ts';
import { ensureTaxonomy } from '../lib/modes/taxonomy/taxonomy-store.ts';
import { formatMetrics, textOf } from './support/classifier-report.ts';
import { startSimulatedJudge } from './simulated-judge.ts';

export interface ChainEval {
  judge: { simulated: true; configuredAccuracy: number; malformedShare: number; brokenShare: number };
  metrics: MultiLabelMetrics;
  /** How the chain settled each held-out item. */
  outcomes: Partial<Record<ChainOutcome, number>>;
  /** Exact-set accuracy of the simulated judge on the items it settled (measures the simulation, not a model). */
  judgeExactMatch: number;
  judgeCalls: number;
  /** Calibration of the chain's confidence: local confidence when kept, judge confidence when judged. */
  confidenceCalibration: Calibration;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

/** A labelled record as the stored signal the chain reads. */
export function labelledSignal(r: LabelledRecord, id: string = r.id, receivedAt = '2026-12-02T12:00:00.000Z'): Signal {
  return {
    key: signalKeyOf(r.kind === 'report' ? 'report' : 'feedback', id),
    kind: r.kind === 'report' ? 'report' : 'feedback',
    id,
    model: 'ckpt-eval',
    signalKind: r.kind === 'report' ? 'report' : 'comment',
    rating: r.rating,
    text: textOf(r),
    trainingConsent: false,
    receivedAt,
    day: receivedAt.slice(0, 10),
  };
}

export async function evaluateChain(
  local: { heldout: LabelledRecord[]; model: LocalClassifier },
  options: { judgeAccuracy: number; malformedShare?: number; brokenShare?: number },
): Promise<ChainEval> {
  const { heldout, model } = local;
  const oracle = new Map(heldout.map((r) => [textOf(r), r.modes]));
  const malformedShare = options.malformedShare ?? 0.03;
  const brokenShare = options.brokenShare ?? 0.02;
  const judge = await startSimulatedJudge(oracle, model.modes, { accuracy: options.judgeAccuracy, malformedShare, brokenShare });
  const dir = mkdtempSync(join(tmpdir(), 'flywheel-chain-eval-'));
  const ports = openLocalPorts(dir, { now: () => new Date('2026-12-02T12:00:00.000Z') });
  try {
    const taxonomy = await ensureTaxonomy(ports.records);
    const deps = { ports, classifier: fixedClassifier(model), judge: createModel(judge.spec, { apiKey: 'simulated' }) };
    const predicted: string[][] = [];
    const points: { confidence: number; correct: boolean }[] = [];
    const outcomes: Partial<Record<ChainOutcome, number>> = {};
    let judged = 0;
    let judgeRight = 0;
    for (const r of heldout) {
      const { outcome, label } = await classifySignal(deps, labelledSignal(r), taxonomy);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      const labels = label.modes.map((m) => m.mode);
      if (outcome === 'judge') {
        judged++;
        if (sameSet(labels, r.modes)) judgeRight++;
      }
      predicted.push(labels);
      points.push({ confidence: label.confidence, correct: sameSet(labels, r.modes) });
    }
    return {
      judge: { simulated: true, configuredAccuracy: options.judgeAccuracy, malformedShare, brokenShare },
      metrics: multiLabelMetrics(predicted, heldout.map((r) => r.modes), [...model.modes]),
      outcomes,
      judgeExactMatch: judged === 0 ? 0 : judgeRight / judged,
      judgeCalls: judge.server.chatRequests().length,
      confidenceCalibration: calibration(points),
    };
  } finally {
    ports.close();
    rmSync(dir, { recursive: true, force: true });
    await judge.close();
  }
}

export function formatChain(c: ChainEval): string[] {
  const o = c.outcomes;
  return [
    ...formatMetrics(
      `Chain (pipeline's classifySignal): local classifier + LLM judge on escalated items — JUDGE SIMULATED (scripted server answering from the held-out labels, right ${(100 * c.judge.configuredAccuracy).toFixed(0)}% of the time, first answer malformed ${(100 * c.judge.malformedShare).toFixed(0)}% and every answer ${(100 * c.judge.brokenShare).toFixed(0)}% of the time)`,
      c.metrics,
    ),
    `  settled locally ${o.local ?? 0}, by the judge ${o.judge ?? 0} (simulated judge exact-set ${(100 * c.judgeExactMatch).toFixed(1)}%), sent to human review ${o.review ?? 0} (counted with the local labels), nothing to classify ${o.none ?? 0}; ${c.judgeCalls} judge HTTP calls (retries included)`,
    `  chain confidence ECE ${c.confidenceCalibration.ece.toFixed(3)} (the judge part is the simulation's own number, not a model's)`,
  ];
}
