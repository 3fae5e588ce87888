/**
 * The true population values of the user model (`user-model.ts`), worked out from its formulas rather than estimated:
 * the per-unit mean and standard deviation of the value metric, the success share, the true ratio (value per turn),
 * and the correlation between a user's pre-period and post-period sums (what CUPED can remove: ρ²).
 *
 * Given the activity latent z, everything is a moment of log-normals and Poissons in closed form; the one integral
 * left, over z ~ N(0, 1), is done by Simpson's rule on [−8, 8] (the tails beyond weigh under 1e-15).
 * With K = 1 + Poisson(λ) turns after exposure, K_pre = Poisson(λ) before, E[η] = 1, E[η²] = e^{τ²}:
 *   E[X | s, λ] = s(1+λ),   E[X² | s, λ] = s²((1+λ)e^{τ²} + λ² + 2λ),
 *   E[C | s, λ] = sλ,       E[C² | s, λ] = s²(λe^{τ²} + λ²),      E[XC | s, λ] = s²λ(1+λ),
 *   P(no success | K = k) = E[(1−p)^k] = Π_{j<k} (β+j)/(α+β+j)   (p ~ Beta(α, β)).
 *
 * @example
 * const truth = modelTruths(DEFAULT_USER_MODEL);
 * truth.valueMean; truth.valueSd; truth.successShare; truth.ratioPerTurn; truth.prePostCorrelation;
 */
import type { UserModel } from './user-model.ts';

export interface ModelTruths {
  /** E[X]: a unit's post-period sum of values. */
  valueMean: number;
  /** sd of X over units. */
  valueSd: number;
  /** q̄: share of units with at least one success after exposure. */
  successShare: number;
  /** E[X] / E[K]: the value per turn a ratio metric estimates. */
  ratioPerTurn: number;
  /** Mean turns per exposed unit. */
  turnsPerUnit: number;
  /** Corr(C, X): the pre-period sum against the post-period sum. */
  prePostCorrelation: number;
}

const Z_RANGE = 8;
const Z_STEPS = 3200; // even, for Simpson's rule

/** ∫ f(z) φ(z) dz by Simpson's rule. */
function expectOverZ(f: (z: number) => number): number {
  const h = (2 * Z_RANGE) / Z_STEPS;
  let total = 0;
  for (let i = 0; i <= Z_STEPS; i++) {
    const z = -Z_RANGE + i * h;
    const weight = i === 0 || i === Z_STEPS ? 1 : i % 2 === 1 ? 4 : 2;
    total += weight * f(z) * Math.exp(-(z * z) / 2);
  }
  return (total * h) / 3 / Math.sqrt(2 * Math.PI);
}

/**
 * The model's true population values (see the file's comment for the formulas).
 *
 * @example
 * const { valueMean, valueSd } = modelTruths(DEFAULT_USER_MODEL);
 */
export function modelTruths(model: UserModel): ModelTruths {
  const { turnsMean: lambda0, activitySpread: a, logScale: mu, scaleOnActivity: b, scaleSpread: c, turnNoise: tau } = model;
  const lambdaAt = (z: number) => lambda0 * Math.exp(a * z - (a * a) / 2);
  // E[s^k | z] = exp(kμ + kbz + k²c²/2)
  const scaleMoment = (k: number, z: number) => Math.exp(k * mu + k * b * z + (k * k * c * c) / 2);
  const eTau2 = Math.exp(tau * tau);

  const ex = expectOverZ((z) => scaleMoment(1, z) * (1 + lambdaAt(z)));
  const ex2 = expectOverZ((z) => { const l = lambdaAt(z); return scaleMoment(2, z) * ((1 + l) * eTau2 + l * l + 2 * l); });
  const ec = expectOverZ((z) => scaleMoment(1, z) * lambdaAt(z));
  const ec2 = expectOverZ((z) => { const l = lambdaAt(z); return scaleMoment(2, z) * (l * eTau2 + l * l); });
  const exc = expectOverZ((z) => { const l = lambdaAt(z); return scaleMoment(2, z) * l * (1 + l); });

  // P(no success | k turns) for k = 0, 1, 2, … (grown on demand).
  const { alpha, beta } = model.propensity;
  const noSuccess: number[] = [1];
  const noSuccessAt = (k: number): number => {
    while (noSuccess.length <= k) {
      const j = noSuccess.length - 1;
      noSuccess.push(noSuccess[j]! * ((beta + j) / (alpha + beta + j)));
    }
    return noSuccess[k]!;
  };
  const failShare = expectOverZ((z) => {
    const l = lambdaAt(z);
    // Σ_{m ≥ 0} Poisson(m; λ) · P(no success | m + 1 turns), the pmf grown iteratively in log space.
    const mMax = Math.ceil(l + 15 * Math.sqrt(l) + 30);
    let total = 0;
    for (let m = 0; m <= mMax; m++) {
      const logPmf = -l + (m === 0 ? 0 : m * Math.log(l)) - logFactorial(m);
      total += Math.exp(logPmf) * noSuccessAt(m + 1);
    }
    return total;
  });

  const varX = ex2 - ex * ex;
  const varC = ec2 - ec * ec;
  return {
    valueMean: ex,
    valueSd: Math.sqrt(varX),
    successShare: 1 - failShare,
    ratioPerTurn: ex / (1 + lambda0),
    turnsPerUnit: 1 + lambda0,
    prePostCorrelation: (exc - ex * ec) / Math.sqrt(varX * varC),
  };
}

const logFactorials: number[] = [0];
function logFactorial(n: number): number {
  while (logFactorials.length <= n) logFactorials.push(logFactorials[logFactorials.length - 1]! + Math.log(logFactorials.length));
  return logFactorials[n]!;
}
