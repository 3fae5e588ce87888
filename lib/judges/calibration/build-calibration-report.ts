/**
 * Builds the calibration report of one judge version on one gold set: per label id (criterion id, `preference`,
 * `mode:<id>`) Cohen's kappa and Krippendorff's alpha with seeded bootstrap 95% intervals, accuracy, per-class
 * precision and recall, the confusion matrix and the human ceiling; then test–retest agreement, position-swap
 * consistency, the length-bias coefficient, cost and latency per verdict. Pure: same input and seed, same report.
 *
 * Pairing: an item counts for a label id when its gold labels and the judge's labels both have that id; a verdict the
 * judge did not give (voided, missing) leaves the item out of that id's statistics, so `n` is the number of pairs —
 * and is counted as unanswered: each id records its gold items (`goldItems`) and the share answered (`coverage`), and
 * the report the gold items, those with any verdict and the share (`coverage`), for the acceptance rule to refuse a
 * judge that answered too few. Each id also records the share of bootstrap resamples on which kappa is defined.
 * Label ids are those of the gold items, in order of first appearance. When kappa is undefined (one and the same class
 * everywhere, scikit-learn's NaN) the criterion says why in `kappaUndefined` and its kappa and alpha read 0.
 * The human ceiling is kappa between `labels` and `secondLabels` on the items that have both for the id; it is left
 * out when no item has both, or when that kappa is undefined. Test–retest: agreement pools every (item, label id)
 * both runs gave; kappa is computed per label id and averaged over the ids where it is defined (pooling ids would
 * mix their base rates: a coin-flip retest on two criteria would read 0.40), each id's figures in `perLabel`. Cost is the mean `costUsd` of the verdicts that report one; latency
 * p50/p95 interpolate linearly (numpy's default).
 */
import { ValidationError } from '../../errors.ts';
import type { JudgeRef } from '../judge-identity.ts';
import type { CalibrationReport, CriterionAgreement, GoldItem, Interval, JudgeLabels } from '../schemas.ts';
import { accuracy, alphaFromCounts, kappaFromCounts, labelOrder, perClassMetrics, type Confusion } from './agreement.ts';
import { bootstrapAgreement, percentileSorted, streamSeed } from './bootstrap.ts';
import { lengthBias, type LengthBiasRow } from './length-bias.ts';

export const DEFAULT_RESAMPLES = 1000;
export const DEFAULT_SEED = 1;

export interface CalibrationInput {
  id: string;
  judge: JudgeRef;
  goldSet: string;
  createdAt: string;
  items: readonly GoldItem[];
  /** The judge's labels per gold item id. */
  verdicts: ReadonlyMap<string, JudgeLabels>;
  /** A second run of the same judge on (some of) the same items: test–retest. */
  retest?: ReadonlyMap<string, JudgeLabels>;
  /** For pair items: the judge's labels with a and b swapped. */
  swapped?: ReadonlyMap<string, JudgeLabels>;
  resamples?: number;
  seed?: number;
}

interface Paired {
  labels: string[];
  cells: Int32Array;
  counts: Float64Array;
}

/** Codes paired labels into cells of a k×k matrix in `labelOrder`. */
function pair(first: readonly string[], second: readonly string[]): Paired {
  const labels = labelOrder([...first, ...second]);
  const index = new Map(labels.map((l, i) => [l, i]));
  const k = labels.length;
  const cells = new Int32Array(first.length);
  const counts = new Float64Array(k * k);
  for (let i = 0; i < first.length; i++) {
    const cell = index.get(first[i]!)! * k + index.get(second[i]!)!;
    cells[i] = cell;
    counts[cell]!++;
  }
  return { labels, cells, counts };
}

function toConfusion(p: Paired): Confusion {
  const k = p.labels.length;
  return { labels: p.labels, matrix: p.labels.map((_, r) => p.labels.map((__, c) => p.counts[r * k + c]!)) };
}

const ZERO: Interval = { estimate: 0, low: 0, high: 0 };

function withInterval(estimate: number, boot: { low: number; high: number } | null): Interval {
  return boot === null ? { estimate, low: estimate, high: estimate } : { estimate, low: boot.low, high: boot.high };
}

function undefinedReason(p: Paired, n: number): string {
  if (n === 0) return 'no item has both a gold label and a verdict';
  return `every item is ${p.labels[0]} for both gold and judge: chance agreement is 1`;
}

function validate(input: CalibrationInput, resamples: number, seed: number): void {
  const issues: { path: string; message: string }[] = [];
  if (!Number.isInteger(resamples) || resamples < 1) issues.push({ path: 'resamples', message: 'must be a positive integer' });
  if (!Number.isInteger(seed)) issues.push({ path: 'seed', message: 'must be an integer' });
  if (input.id.length === 0) issues.push({ path: 'id', message: 'must not be empty' });
  const seen = new Set<string>();
  input.items.forEach((item, i) => {
    if (seen.has(item.id)) issues.push({ path: `items[${i}].id`, message: `duplicate gold item id ${item.id}` });
    seen.add(item.id);
  });
  for (const [name, map] of [['verdicts', input.verdicts], ['retest', input.retest], ['swapped', input.swapped]] as const) {
    for (const [key, v] of map ?? []) {
      if (!(v.latencyMs >= 0)) issues.push({ path: `${name}.${key}.latencyMs`, message: 'must be a non-negative number' });
      if (v.costUsd !== undefined && !(v.costUsd >= 0)) issues.push({ path: `${name}.${key}.costUsd`, message: 'must be a non-negative number' });
    }
  }
  if (issues.length > 0) throw new ValidationError(`invalid calibration input: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
}

/** The agreement of one label id: judge vs gold, and gold vs second person. */
function agreementFor(id: string, input: CalibrationInput, resamples: number, seed: number): CriterionAgreement {
  const gold: string[] = [];
  const judge: string[] = [];
  const first: string[] = [];
  const second: string[] = [];
  let goldItems = 0;
  for (const item of input.items) {
    const g = item.labels[id];
    if (g === undefined) continue;
    goldItems++;
    const j = input.verdicts.get(item.id)?.labels[id];
    if (j !== undefined) {
      gold.push(g);
      judge.push(j);
    }
    const s = item.secondLabels?.[id];
    if (s !== undefined) {
      first.push(g);
      second.push(s);
    }
  }
  const p = pair(gold, judge);
  const k = p.labels.length;
  const n = gold.length;
  const confusion = toConfusion(p);
  const kappa = kappaFromCounts(p.counts, k);
  const alpha = alphaFromCounts(p.counts, k);
  const boot = bootstrapAgreement({ cells: p.cells, k, resamples, seed: streamSeed(seed, id) });
  const out: CriterionAgreement = {
    id,
    n,
    kappa: kappa === null ? ZERO : withInterval(kappa, boot.kappa),
    alpha: alpha === null ? ZERO : withInterval(alpha, boot.alpha),
    accuracy: accuracy(confusion) ?? 0,
    perClass: perClassMetrics(confusion),
    confusion,
    goldItems,
    coverage: goldItems === 0 ? 0 : n / goldItems,
    bootstrapDefined: n === 0 ? 0 : (boot.kappa?.defined ?? 0) / resamples,
  };
  if (kappa === null) out.kappaUndefined = undefinedReason(p, n);
  if (first.length > 0) {
    const h = pair(first, second);
    const hk = kappaFromCounts(h.counts, h.labels.length);
    if (hk !== null) {
      const hb = bootstrapAgreement({ cells: h.cells, k: h.labels.length, resamples, seed: streamSeed(seed, `human:${id}`) });
      out.humanCeiling = withInterval(hk, hb.kappa);
    }
  }
  return out;
}

const FLIP: Record<string, string> = { a: 'b', b: 'a', tie: 'tie' };

/**
 * The calibration report of `input.judge` on the gold set `input.goldSet`.
 *
 * @example
 * const report = buildCalibrationReport({
 *   id: 'cal-1', judge: { name: 'rubric-judge', version: 'a1b2c3d4e5f6' }, goldSet: 'gold-main',
 *   createdAt: new Date().toISOString(), items, verdicts, retest, resamples: 1000, seed: 7,
 * });
 * report.criteria[0]; // { id: 'correctness', n: 200, kappa: { estimate: 0.81, low: 0.73, high: 0.88 }, … }
 */
export function buildCalibrationReport(input: CalibrationInput): CalibrationReport {
  const resamples = input.resamples ?? DEFAULT_RESAMPLES;
  const seed = input.seed ?? DEFAULT_SEED;
  validate(input, resamples, seed);

  const ids: string[] = [];
  const seenIds = new Set<string>();
  for (const item of input.items) {
    for (const id of Object.keys(item.labels)) {
      if (seenIds.has(id)) continue;
      seenIds.add(id);
      ids.push(id);
    }
  }
  const report: CalibrationReport = {
    id: input.id,
    judge: { name: input.judge.name, version: input.judge.version },
    goldSet: input.goldSet,
    createdAt: input.createdAt,
    bootstrap: { resamples, seed },
    criteria: ids.map((id) => agreementFor(id, input, resamples, seed)),
  };

  // Coverage: gold items the judge answered (a verdict with at least one label).
  const answered = input.items.filter((item) => Object.keys(input.verdicts.get(item.id)?.labels ?? {}).length > 0).length;
  report.coverage = { goldItems: input.items.length, answered, share: input.items.length === 0 ? 0 : answered / input.items.length };

  // Test–retest: agreement over every (item, label id) both runs gave; kappa per label id, then averaged.
  if (input.retest !== undefined) {
    const byId = new Map<string, { a: string[]; b: string[] }>();
    for (const item of input.items) {
      const first = input.verdicts.get(item.id);
      const again = input.retest.get(item.id);
      if (first === undefined || again === undefined) continue;
      for (const [id, label] of Object.entries(first.labels)) {
        const other = again.labels[id];
        if (other === undefined) continue;
        let runs = byId.get(id);
        if (!runs) byId.set(id, (runs = { a: [], b: [] }));
        runs.a.push(label);
        runs.b.push(other);
      }
    }
    if (byId.size > 0) {
      let n = 0;
      let same = 0;
      const kappas: number[] = [];
      const perLabel: Record<string, { n: number; agreement: number; kappa: number | null }> = {};
      for (const [id, { a, b }] of byId) {
        const agreeing = a.reduce((s, v, i) => s + (v === b[i] ? 1 : 0), 0);
        const p = pair(a, b);
        const kappa = kappaFromCounts(p.counts, p.labels.length);
        if (kappa !== null) kappas.push(kappa);
        perLabel[id] = { n: a.length, agreement: agreeing / a.length, kappa };
        n += a.length;
        same += agreeing;
      }
      const kappa = kappas.length === 0 ? null : kappas.reduce((s, k) => s + k, 0) / kappas.length;
      report.testRetest = { n, agreement: same / n, kappa, perLabel };
    }
  }

  // Position swap: a pair judged with a and b swapped should flip its preference (a↔b, tie stays).
  if (input.swapped !== undefined) {
    let n = 0;
    let consistent = 0;
    for (const item of input.items) {
      if (item.subject.kind !== 'pair') continue;
      const original = input.verdicts.get(item.id)?.labels.preference;
      const swapped = input.swapped.get(item.id)?.labels.preference;
      if (original === undefined || swapped === undefined) continue;
      n++;
      if (FLIP[original] !== undefined && FLIP[original] === swapped) consistent++;
    }
    if (n > 0) report.positionSwap = { n, consistency: consistent / n };
  }

  // Length bias over every (item, label id) with a length.
  const rows: LengthBiasRow[] = [];
  for (const item of input.items) {
    if (item.length === undefined) continue;
    const verdict = input.verdicts.get(item.id);
    if (verdict === undefined) continue;
    for (const [id, goldLabel] of Object.entries(item.labels)) {
      const judgeLabel = verdict.labels[id];
      if (judgeLabel !== undefined) rows.push({ id, length: item.length, judge: judgeLabel, gold: goldLabel });
    }
  }
  const bias = lengthBias(rows);
  if (bias !== undefined) report.lengthBias = { coefficient: bias.coefficient, judgeSlope: bias.judgeSlope, goldSlope: bias.goldSlope };

  // Cost and latency per verdict, over the verdicts on gold items.
  const costs: number[] = [];
  const latencies: number[] = [];
  for (const item of input.items) {
    const v = input.verdicts.get(item.id);
    if (v === undefined) continue;
    if (v.costUsd !== undefined) costs.push(v.costUsd);
    latencies.push(v.latencyMs);
  }
  if (costs.length > 0) report.costPerVerdictUsd = costs.reduce((s, c) => s + c, 0) / costs.length;
  if (latencies.length > 0) {
    const sorted = Float64Array.from(latencies).sort();
    report.latencyMs = { p50: percentileSorted(sorted, 50), p95: percentileSorted(sorted, 95) };
  }
  return report;
}
