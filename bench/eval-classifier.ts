/**
 * `npm run eval:classifier`: quality of the failure-mode classifier on the held-out part of the labelled set
 * (`data/modes/labelled.jsonl`). Trains the local classifier on the `train` split only, then reports on `heldout`:
 * per-mode precision / recall / F1 with micro and macro averages, exact-set accuracy, the escalation split, and
 * calibration (reliability bins and ECE) of both the per-mode probabilities and the set confidence.
 *
 * The chain (local classifier, then the pipeline's LLM judge on escalated items) is measured by `chain-eval.ts`; its
 * judge is SIMULATED (a scripted model server answering from the held-out labels with noise),
 * so its numbers show what the chain's routing does with a judge of a given accuracy, not how good any real LLM is.
 *
 * Flags: `--json <file>` also writes every number as JSON. Env: EVAL_JUDGE_ACCURACY (simulated judge, default 0.85).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { calibration, multiLabelMetrics, type Calibration, type MultiLabelMetrics } from '../lib/modes/classifier/classification-metrics.ts';
import { readLabelledSet, toLabelledExamples, type LabelledRecord } from '../lib/modes/classifier/labelled-set.ts';
import { trainLocalClassifier, type Classification, type LocalClassifier } from '../lib/modes/classifier/local-classifier.ts';
import { defaultTaxonomy } from '../lib/modes/taxonomy/taxonomy.ts';
import { evaluateChain, formatChain } from './chain-eval.ts';
import { formatMetrics, num, pct, textOf } from './support/classifier-report.ts';

export interface LocalEval {
  model: { modelVersion: string; trainExamples: number; heldoutItems: number; trainSeconds: number; escalationThreshold: number; validation: LocalClassifier['validation'] };
  metrics: MultiLabelMetrics;
  subsets: Record<string, MultiLabelMetrics>;
  escalation: { share: number; keptExactMatch: number; escalatedExactMatch: number; kept: number; escalated: number };
  /** Each validation-chosen threshold of `validation.escalationCurve`, applied to held-out items. */
  escalationTradeoff: { targetAccuracy: number; threshold: number; validationCoverage: number; heldoutEscalated: number; heldoutKeptExactMatch: number }[];
  probabilityCalibration: Calibration;
  confidenceCalibration: Calibration;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

/** Trains on `train`, evaluates on `heldout`. */
export function evaluateLocal(records: LabelledRecord[] = readLabelledSet()): { result: LocalEval; model: LocalClassifier; heldout: LabelledRecord[]; outputs: Classification[] } {
  const taxonomy = defaultTaxonomy();
  const train = toLabelledExamples(records.filter((r) => r.split === 'train'));
  const heldout = records.filter((r) => r.split === 'heldout');
  const t0 = performance.now();
  const model = trainLocalClassifier(train, taxonomy);
  const trainSeconds = (performance.now() - t0) / 1000;
  const outputs = heldout.map((r) => model.classify(textOf(r)));
  const predicted = outputs.map((o) => o.labels.map((l) => l.mode));
  const truth = heldout.map((r) => r.modes);
  const modes = [...model.modes];
  const subset = (keep: (r: LabelledRecord) => boolean): MultiLabelMetrics => {
    const idx = heldout.map((r, i) => (keep(r) ? i : -1)).filter((i) => i >= 0);
    return multiLabelMetrics(idx.map((i) => predicted[i]!), idx.map((i) => truth[i]!), modes);
  };
  const correct = outputs.map((o, i) => sameSet(predicted[i]!, truth[i]!));
  const kept = outputs.map((o, i) => i).filter((i) => !outputs[i]!.escalate);
  const escalated = outputs.map((o, i) => i).filter((i) => outputs[i]!.escalate);
  const share = (idx: number[]) => (idx.length === 0 ? 0 : idx.filter((i) => correct[i]).length / idx.length);
  const probabilityPoints = outputs.flatMap((o, i) => o.scores.map((s) => ({ confidence: s.probability, correct: truth[i]!.includes(s.mode) })));
  return {
    model,
    heldout,
    outputs,
    result: {
      model: {
        modelVersion: model.modelVersion,
        trainExamples: train.length,
        heldoutItems: heldout.length,
        trainSeconds,
        escalationThreshold: model.escalationThreshold,
        validation: model.validation,
      },
      metrics: multiLabelMetrics(predicted, truth, modes),
      subsets: {
        'single-label': subset((r) => r.modes.length === 1),
        'multi-label': subset((r) => r.modes.length > 1),
        ambiguous: subset((r) => r.ambiguous),
        comments: subset((r) => r.kind === 'comment'),
        reports: subset((r) => r.kind === 'report'),
      },
      escalation: {
        share: escalated.length / outputs.length,
        kept: kept.length,
        escalated: escalated.length,
        keptExactMatch: share(kept),
        escalatedExactMatch: share(escalated),
      },
      escalationTradeoff: model.validation.escalationCurve.map((c) => {
        const keep = outputs.map((_, i) => i).filter((i) => outputs[i]!.confidence >= c.threshold);
        return {
          targetAccuracy: c.targetAccuracy,
          threshold: c.threshold,
          validationCoverage: c.coverage,
          heldoutEscalated: 1 - keep.length / outputs.length,
          heldoutKeptExactMatch: share(keep),
        };
      }),
      probabilityCalibration: calibration(probabilityPoints),
      confidenceCalibration: calibration(outputs.map((o, i) => ({ confidence: o.confidence, correct: correct[i]! }))),
    },
  };
}

export function formatCalibration(title: string, c: Calibration): string[] {
  const lines = [`${title}  (ECE ${num(c.ece)}, Brier ${num(c.brier)}, ${c.items} points)`, '  bin          count  mean conf  accuracy'];
  for (const b of c.bins) {
    if (b.count === 0) continue;
    lines.push(`  [${b.lower.toFixed(1)}, ${b.upper.toFixed(1)})  ${String(b.count).padStart(6)}     ${num(b.meanConfidence)}     ${num(b.accuracy)}`);
  }
  return lines;
}

export function formatLocal(r: LocalEval): string[] {
  const v = r.model.validation;
  const lines: string[] = [
    'Failure-mode classifier: held-out evaluation',
    `data: data/modes/labelled.jsonl — ${r.model.trainExamples} train, ${r.model.heldoutItems} held-out (fixed split)`,
    `local model ${r.model.modelVersion}: TF-IDF (words 1–2, chars 3–5) + one-vs-rest logistic regression, trained in ${r.model.trainSeconds.toFixed(2)} s`,
    `validation (${v.folds}-fold CV on train): micro-F1 ${num(v.microF1)}, label rule top ≥ ${v.decision.topFloor} + others ≥ ${v.decision.extraThreshold}; ` +
      `escalate when confidence < ${num(r.model.escalationThreshold)} (target exact-set accuracy ${v.escalation.targetAccuracy}${v.escalation.reached ? '' : ', NOT reached: everything escalates'}, validation coverage ${pct(v.escalation.coverage)})`,
    '',
    ...formatMetrics('Local classifier, held-out', r.metrics),
    '',
    'Held-out subsets (micro-F1 / exact set):',
    ...Object.entries(r.subsets).map(([k, m]) => `  ${k.padEnd(14)} ${String(m.items).padStart(4)} items  micro-F1 ${num(m.micro.f1)}  exact ${pct(m.exactMatch)}`),
    '',
    `Escalation at the chosen threshold: ${pct(r.escalation.share)} of held-out items escalate (${r.escalation.escalated}); ` +
      `kept locally ${r.escalation.kept} with exact-set accuracy ${pct(r.escalation.keptExactMatch)}; escalated ones ${pct(r.escalation.escalatedExactMatch)} locally`,
    '',
    'Escalation trade-off (threshold chosen on validation for each target, applied to held-out):',
    '  target  threshold  validation coverage  held-out escalated  held-out kept exact-set accuracy',
    ...r.escalationTradeoff.map(
      (t) => `  ${t.targetAccuracy.toFixed(2)}    ${num(t.threshold)}     ${pct(t.validationCoverage)}               ${pct(t.heldoutEscalated)}             ${pct(t.heldoutKeptExactMatch)}`,
    ),
    '',
    ...formatCalibration('Calibration of per-mode probabilities (each item × mode)', r.probabilityCalibration),
    '',
    ...formatCalibration('Calibration of the set confidence (P(label set exactly right))', r.confidenceCalibration),
  ];
  return lines;
}

async function main(): Promise<void> {
  const jsonAt = process.argv.indexOf('--json');
  const jsonPath = jsonAt >= 0 ? process.argv[jsonAt + 1] : undefined;
  const local = evaluateLocal();
  const lines = formatLocal(local.result);
  const chain = await evaluateChain(local, { judgeAccuracy: Number(process.env.EVAL_JUDGE_ACCURACY ?? 0.85) });
  lines.push('', ...formatChain(chain));
  console.log(lines.join('\n'));
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify({ local: local.result, chain }, null, 2));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
