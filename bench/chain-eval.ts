/**
 * The chain's quality on the held-out set: the local classifier labels every item; the escalated ones go to the
 * pipeline's LLM judge (`judgeSignal`, over real HTTP to a SIMULATED judge, see `simulated-judge.ts`); a judge that
 * still fails after its retries sends the item to human review, which here keeps the local labels (a reviewer has
 * not answered yet). Used by `eval-classifier.ts`.
 */
import { createModel } from '../lib/models/create-model.ts';
import { calibration, multiLabelMetrics, type Calibration, type MultiLabelMetrics } from '../lib/modes/classifier/classification-metrics.ts';
import { judgeSignal } from '../lib/modes/judge-signal.ts';
import { defaultTaxonomy } from '../lib/modes/taxonomy/taxonomy.ts';
import { formatMetrics, textOf, type evaluateLocal } from './eval-classifier.ts';
import { startSimulatedJudge } from './simulated-judge.ts';

export interface ChainEval {
  judge: { simulated: true; configuredAccuracy: number; malformedShare: number; brokenShare: number };
  metrics: MultiLabelMetrics;
  /** Exact-set accuracy of the simulated judge on the items it answered (measures the simulation, not a model). */
  judgeExactMatch: number;
  escalated: number;
  judged: number;
  /** Judge failed after its retries → human review queue. */
  sentToReview: number;
  judgeRetries: number;
  judgeCalls: number;
  /** Calibration of the chain's confidence: local confidence when kept, judge confidence when judged. */
  confidenceCalibration: Calibration;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

export async function evaluateChain(
  local: ReturnType<typeof evaluateLocal>,
  options: { judgeAccuracy: number; malformedShare?: number; brokenShare?: number },
): Promise<ChainEval> {
  const taxonomy = defaultTaxonomy();
  const { heldout, outputs, model } = local;
  const oracle = new Map(heldout.map((r) => [textOf(r), r.modes]));
  const malformedShare = options.malformedShare ?? 0.03;
  const brokenShare = options.brokenShare ?? 0.02;
  const judge = await startSimulatedJudge(oracle, model.modes, { accuracy: options.judgeAccuracy, malformedShare, brokenShare });
  try {
    const llm = createModel(judge.spec, { apiKey: 'simulated' });
    const predicted: string[][] = [];
    const points: { confidence: number; correct: boolean }[] = [];
    let judged = 0;
    let sentToReview = 0;
    let judgeRetries = 0;
    let judgeRight = 0;
    for (let i = 0; i < heldout.length; i++) {
      const r = heldout[i]!;
      const o = outputs[i]!;
      let labels = o.labels.map((l) => l.mode);
      let confidence = o.confidence;
      if (o.escalate) {
        const v = await judgeSignal(llm, taxonomy, { comment: textOf(r), rating: r.rating, signalKind: r.kind === 'report' ? 'report' : 'comment' });
        judgeRetries += v.attempts - 1;
        if (v.ok) {
          judged++;
          labels = v.verdict.modes.map((m) => m.mode);
          confidence = v.verdict.confidence;
          if (sameSet(labels, r.modes)) judgeRight++;
        } else {
          sentToReview++;
        }
      }
      predicted.push(labels);
      points.push({ confidence, correct: sameSet(labels, r.modes) });
    }
    return {
      judge: { simulated: true, configuredAccuracy: options.judgeAccuracy, malformedShare, brokenShare },
      metrics: multiLabelMetrics(predicted, heldout.map((r) => r.modes), [...model.modes]),
      judgeExactMatch: judged === 0 ? 0 : judgeRight / judged,
      escalated: outputs.filter((o) => o.escalate).length,
      judged,
      sentToReview,
      judgeRetries,
      judgeCalls: judge.server.chatRequests().length,
      confidenceCalibration: calibration(points),
    };
  } finally {
    await judge.close();
  }
}

export function formatChain(c: ChainEval): string[] {
  return [
    ...formatMetrics(
      `Chain: local classifier + LLM judge on escalated items — JUDGE SIMULATED (scripted server answering from the held-out labels, right ${(100 * c.judge.configuredAccuracy).toFixed(0)}% of the time, first answer malformed ${(100 * c.judge.malformedShare).toFixed(0)}% and every answer ${(100 * c.judge.brokenShare).toFixed(0)}% of the time)`,
      c.metrics,
    ),
    `  escalated ${c.escalated}: judged ${c.judged} (simulated judge exact-set ${(100 * c.judgeExactMatch).toFixed(1)}%), ${c.judgeRetries} retries after malformed answers, ${c.sentToReview} sent to human review (kept local labels); ${c.judgeCalls} judge HTTP calls`,
    `  chain confidence ECE ${c.confidenceCalibration.ece.toFixed(3)} (the judge part is the simulation's own number, not a model's)`,
  ];
}
