/**
 * The asymptotic confidence sequence (Waudby-Smith, Arnold, Wu, Ramdas 2021) against its formula written afresh in
 * python3 from the paper (eq. for the two-sided AsympCS with a Gaussian mixture of variance ρ²), its ρ against the
 * numerically optimal one at the tuning sample (scipy `minimize_scalar`), and its promise by simulation: continuous
 * peeking at an A/A test keeps the false-positive rate at or below alpha, where peeking at the fixed-horizon
 * interval does not.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { compareArms, confidenceSequenceHalfWidth, normalQuantile, sequentialRho, type ArmMoments } from '../../../lib/shared/statistics/index.ts';
import { close, pythonReference } from './support/reference.ts';
import { mulberry32 } from '../../../lib/shared/seeded-random.ts';

const SCRIPT = String.raw`
import json, sys, math
from scipy.optimize import minimize_scalar
c = json.load(sys.stdin)
def width(sd, t, alpha, rho2):
    # Waudby-Smith et al. (2021), asymptotic CS: sd * sqrt((t*rho^2 + 1)/(t^2 rho^2) * 2 log(sqrt(t*rho^2 + 1)/alpha))
    return sd * math.sqrt((t * rho2 + 1) / (t * t * rho2) * 2 * math.log(math.sqrt(t * rho2 + 1) / alpha))
out = {'width': [], 'bestRho': []}
for sd, n, alpha, tuning in c['cases']:
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuning
    out['width'].append(width(sd, n, alpha, rho2))
for alpha, tuning in c['tunings']:
    best = minimize_scalar(lambda lr: width(1, tuning, alpha, math.exp(lr)), bounds=(-40, 5), method='bounded', options={'xatol': 1e-10})
    out['bestRho'].append(math.sqrt(math.exp(best.x)))
print(json.dumps(out))
`;

const CASES: Array<[number, number, number, number]> = [
  [1, 10_000, 0.05, 10_000],
  [0.5, 100, 0.05, 10_000],
  [2.3, 1_000_000, 0.05, 10_000],
  [1, 5_000, 0.01, 5_000],
  [0.8, 40_000, 0.1, 2_000],
  [13, 2, 0.05, 100_000],
];
const TUNINGS: Array<[number, number]> = [
  [0.05, 10_000],
  [0.01, 5_000],
  [0.1, 2_000],
];

let ref: { width: number[]; bestRho: number[] };
beforeAll(() => {
  ref = pythonReference(SCRIPT, { cases: CASES, tunings: TUNINGS });
});

describe('asymptotic confidence sequence', () => {
  it('half-width equals the paper’s formula to 1e-12, and is always wider than the fixed-horizon interval', () => {
    CASES.forEach(([sd, n, alpha, tuningN], i) => {
      const w = confidenceSequenceHalfWidth({ sd, n, alpha, tuningN });
      expect(close(w, ref.width[i]!, 1e-12), `case ${i}: ${w} vs ${ref.width[i]}`).toBe(true);
      expect(w).toBeGreaterThan((normalQuantile(1 - alpha / 2) * sd) / Math.sqrt(n));
    });
  });

  it('ρ is tuned for the planned sample: the width there is within 0.1% of the narrowest any ρ gives', () => {
    TUNINGS.forEach(([alpha, tuningN], i) => {
      const ours = confidenceSequenceHalfWidth({ sd: 1, n: tuningN, alpha, tuningN });
      const rho = sequentialRho(alpha, tuningN);
      const best = ref.bestRho[i]!;
      const at = (r: number) => Math.sqrt(((tuningN * r * r + 1) / (tuningN * tuningN * r * r)) * 2 * Math.log(Math.sqrt(tuningN * r * r + 1) / alpha));
      expect(ours / at(best)).toBeLessThan(1.001);
      expect(close(rho, best, 0.1)).toBe(true);
    });
  });

  it('continuous peeking at an A/A test: FPR ≤ alpha with the sequence, far above it with the fixed-horizon interval', () => {
    // 1000 A/A experiments of a 30% conversion, 4000 units per arm, looked at every 50 units per arm from 100 on
    // (79 looks). Tolerance: alpha + 2 binomial standard errors of a 1000-run rate (0.014).
    const uniform = mulberry32(7);
    const runs = 1000;
    const perArm = 4000;
    let sequentialFalse = 0;
    let naiveFalse = 0;
    for (let r = 0; r < runs; r++) {
      const c: ArmMoments = { units: 0, sumX: 0, sumX2: 0 };
      const t: ArmMoments = { units: 0, sumX: 0, sumX2: 0 };
      let seqHit = false;
      let naiveHit = false;
      for (let n = 1; n <= perArm; n++) {
        for (const arm of [c, t]) {
          const x = uniform() < 0.3 ? 1 : 0;
          arm.units++;
          arm.sumX += x;
          arm.sumX2 += x;
        }
        if (n >= 100 && n % 50 === 0) {
          const s = compareArms(c, t, { kind: 'binomial', direction: 'increase', sequentialTuningUnits: perArm });
          if (s.verdict === 'better' || s.verdict === 'worse') seqHit = true;
          if (s.ci!.low > 0 || s.ci!.high < 0) naiveHit = true;
        }
      }
      if (seqHit) sequentialFalse++;
      if (naiveHit) naiveFalse++;
    }
    const sequentialRate = sequentialFalse / runs;
    const naiveRate = naiveFalse / runs;
    expect(sequentialRate).toBeLessThanOrEqual(0.05 + 0.014);
    expect(naiveRate).toBeGreaterThan(0.15);
  });
});
