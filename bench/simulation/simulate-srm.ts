/**
 * Scenario 4: sample-ratio-mismatch detection. Units are assigned 50/50; in the broken replications the treatment
 * arm's exposures fail to log for 3% of its units (a logging bug on one arm: those units never reach the analysis), in
 * the A/A ones nothing is lost. Each replication runs the analysis's check (`sampleRatioMismatch`, chi-squared,
 * p < 0.001).
 *
 * The expected detection rate is worked out, not assumed: with n logged units, the treatment's share is
 * s = 0.5(1 − drop) / (1 − 0.5·drop); the 1-df statistic is z², z ≈ N((s − ½)√n / ½, s(1 − s) / ¼), so
 * P(detect) = P(|z| > z₀), z₀ = Φ⁻¹(1 − 0.0005). The A/A false-alarm rate is 0.001 by construction.
 *
 * @example
 * const result = simulateSrm({ seed: 1, replications: 200, units: 200_000, aaReplications: 2000, aaUnits: 5000 });
 * result.detection.rate; // ≈ result.detection.expected (≈ 1)
 */
import { normalCdf, normalQuantile } from '../../lib/shared/statistics/normal.ts';
import { SRM_THRESHOLD, sampleRatioMismatch } from '../../lib/shared/statistics/srm.ts';
import { binomialRange, type CountRange } from './monte-carlo-error.ts';
import { SeededRandom } from './seeded-random.ts';

export interface SrmOptions {
  seed: number;
  /** Replications with the broken arm, and units assigned in each. */
  replications: number;
  units: number;
  /** Share of the treatment's units whose exposures are lost. Default 0.03. */
  drop?: number;
  /** A/A replications and their units (the false-alarm rate needs many replications, not many units). */
  aaReplications: number;
  aaUnits: number;
}

export interface SrmRate {
  replications: number;
  hits: number;
  rate: number;
  /** The rate theory expects, and the count range chance explains around it (exact binomial, 0.1% tails). */
  expected: number;
  range: CountRange;
}

export interface SrmResult {
  drop: number;
  units: number;
  aaUnits: number;
  threshold: number;
  detection: SrmRate;
  falseAlarms: SrmRate;
  /** Median p-value of the broken replications. */
  medianPValue: number;
}

/** One replication: units assigned 50/50, the treatment's kept with probability 1 − drop; its check. */
function checkOnce(random: SeededRandom, units: number, drop: number): { mismatch: boolean; pValue: number } {
  let control = 0;
  let treatment = 0;
  for (let i = 0; i < units; i++) {
    if (random.uniform() < 0.5) control++;
    else if (drop === 0 || random.uniform() >= drop) treatment++;
  }
  const result = sampleRatioMismatch({ control, treatment }, { control: 0.5, treatment: 0.5 });
  return { mismatch: result.mismatch, pValue: result.pValue ?? 1 };
}

/**
 * The detection rate theory expects for `units` assigned and `drop` lost from one of two equal arms.
 *
 * @example
 * expectedSrmDetection(200_000, 0.03); // ≈ 0.9997
 */
export function expectedSrmDetection(units: number, drop: number, threshold = SRM_THRESHOLD): number {
  const n = units * (1 - 0.5 * drop);
  const s = (0.5 * (1 - drop)) / (1 - 0.5 * drop);
  const mean = ((s - 0.5) * Math.sqrt(n)) / 0.5;
  const sd = Math.sqrt(s * (1 - s)) / 0.5;
  const z0 = normalQuantile(1 - threshold / 2);
  return normalCdf((-z0 - mean) / sd) + normalCdf((mean - z0) / sd);
}

/**
 * Runs the SRM scenario.
 *
 * @example
 * simulateSrm({ seed: 4, replications: 100, units: 100_000, aaReplications: 1000, aaUnits: 2000 }).falseAlarms.rate;
 */
export function simulateSrm(options: SrmOptions): SrmResult {
  const drop = options.drop ?? 0.03;
  const root = new SeededRandom(options.seed);
  let detected = 0;
  const pValues: number[] = [];
  for (let rep = 0; rep < options.replications; rep++) {
    const once = checkOnce(root.fork(`srm-${rep}`), options.units, drop);
    if (once.mismatch) detected++;
    pValues.push(once.pValue);
  }
  let alarms = 0;
  for (let rep = 0; rep < options.aaReplications; rep++) if (checkOnce(root.fork(`srm-aa-${rep}`), options.aaUnits, 0).mismatch) alarms++;
  pValues.sort((a, b) => a - b);
  const expected = expectedSrmDetection(options.units, drop);
  return {
    drop,
    units: options.units,
    aaUnits: options.aaUnits,
    threshold: SRM_THRESHOLD,
    detection: { replications: options.replications, hits: detected, rate: options.replications ? detected / options.replications : 0, expected, range: binomialRange(options.replications, expected) },
    falseAlarms: { replications: options.aaReplications, hits: alarms, rate: options.aaReplications ? alarms / options.aaReplications : 0, expected: SRM_THRESHOLD, range: binomialRange(options.aaReplications, SRM_THRESHOLD) },
    medianPValue: pValues[Math.floor(pValues.length / 2)] ?? 1,
  };
}
