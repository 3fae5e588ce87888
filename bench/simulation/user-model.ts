/**
 * The simulated users of an experiment: heterogeneous, with repeat turns correlated within a user, and a pre-period.
 *
 * A user has a latent activity `z ~ N(0, 1)` and an idiosyncratic `w ~ N(0, 1)`:
 * - turns in a period: `1 + Poisson(λ)` after exposure (an exposed user has at least the turn that exposed them),
 *   `Poisson(λ)` in the pre-period, with `λ = turnsMean · exp(a·z − a²/2)` (heavy users are many times the median);
 * - a per-user scale of the value metric (tokens, latency): `s = exp(μ + b·z + c·w)` (log-normal), every turn's value
 *   `s · η` with `η` log-normal of mean 1: turns of one user are correlated through `s`, which is why the unit, not the
 *   turn, is the sample;
 * - a per-user propensity of a turn's success `p ~ Beta(α, β)`: the binomial metric is "the user succeeded at least
 *   once after exposure".
 *
 * Effects: `valueLift` multiplies every treated turn's value (so mean and ratio metrics move by exactly that share);
 * `rescue` turns a user who would not have succeeded into one who does with that probability, through the turns
 * (`p' = 1 − (1−p)(1−rescue)^(1/K)`), so the success share moves from q̄ to q̄ + rescue·(1 − q̄) exactly.
 *
 * @example
 * const user = drawUser(random, DEFAULT_USER_MODEL);
 * const period = drawPeriod(random, DEFAULT_USER_MODEL, user, { valueLift: 0.1 });
 */
import type { SeededRandom } from './seeded-random.ts';

export interface UserModel {
  /** Mean of λ, the user's turn rate. */
  turnsMean: number;
  /** a: spread of log λ (heterogeneity of activity). */
  activitySpread: number;
  /** μ: log of the median per-turn value. */
  logScale: number;
  /** b: how the per-turn value moves with activity (negative: heavy users have cheaper turns). */
  scaleOnActivity: number;
  /** c: the user's own spread of the per-turn value. */
  scaleSpread: number;
  /** τ: spread of a turn's value around the user's scale. */
  turnNoise: number;
  /** Beta(α, β) of a turn's success propensity. */
  propensity: { alpha: number; beta: number };
}

/** Tokens-like values: median 400 a turn, heavy users have many more (and slightly cheaper) turns. */
export const DEFAULT_USER_MODEL: UserModel = {
  turnsMean: 3,
  activitySpread: 0.8,
  logScale: Math.log(400),
  scaleOnActivity: -0.3,
  scaleSpread: 0.5,
  turnNoise: 0.6,
  propensity: { alpha: 0.5, beta: 4 },
};

export interface SimUser {
  /** The user's turn rate λ. */
  turnRate: number;
  /** The user's per-turn value scale s. */
  scale: number;
  /** The user's per-turn success propensity p. */
  propensity: number;
}

export interface Treatment {
  /** Relative change of every turn's value (0.2 = 20% more latency). */
  valueLift?: number;
  /** Probability that a user who would not succeed does (the binomial effect). */
  rescue?: number;
}

/** What one user did in one period, reduced to what the per-unit aggregation reads. */
export interface UnitPeriod {
  turns: number;
  /** Σ of the turns' values. */
  valueSum: number;
  /** Σ of the squared turn values (only the naive per-turn interval reads it). */
  valueSquares: number;
  /** 1 when at least one turn succeeded. */
  succeeded: 0 | 1;
}

/**
 * Draws a user from the model.
 *
 * @example
 * const user = drawUser(random, DEFAULT_USER_MODEL);
 */
export function drawUser(random: SeededRandom, model: UserModel): SimUser {
  const z = random.normal();
  const w = random.normal();
  const a = model.activitySpread;
  return {
    turnRate: model.turnsMean * Math.exp(a * z - (a * a) / 2),
    scale: Math.exp(model.logScale + model.scaleOnActivity * z + model.scaleSpread * w),
    propensity: random.beta(model.propensity.alpha, model.propensity.beta),
  };
}

/**
 * Draws one period of a user's turns: `exposed` periods have at least one turn, pre-periods may have none. `onTurn`
 * sees every turn (the ramp scenario writes each as archive rows).
 *
 * @example
 * const after = drawPeriod(random, model, user, { valueLift: 0.2 });
 * const before = drawPeriod(random, model, user, {}, { exposed: false });
 */
export function drawPeriod(
  random: SeededRandom,
  model: UserModel,
  user: SimUser,
  treatment: Treatment = {},
  options: { exposed?: boolean; onTurn?: (value: number, succeeded: boolean) => void } = {},
): UnitPeriod {
  const turns = (options.exposed === false ? 0 : 1) + random.poisson(user.turnRate);
  const tau = model.turnNoise;
  const lift = 1 + (treatment.valueLift ?? 0);
  let p = user.propensity;
  if (treatment.rescue && turns > 0) p = 1 - (1 - p) * Math.pow(1 - treatment.rescue, 1 / turns);
  let valueSum = 0;
  let valueSquares = 0;
  let succeeded: 0 | 1 = 0;
  for (let t = 0; t < turns; t++) {
    const value = user.scale * lift * Math.exp(tau * random.normal() - (tau * tau) / 2);
    valueSum += value;
    valueSquares += value * value;
    const success = random.uniform() < p;
    if (success) succeeded = 1;
    options.onTurn?.(value, success);
  }
  return { turns, valueSum, valueSquares, succeeded };
}
