/**
 * Per-unit values reduced to the sufficient statistics one SQL `GROUP BY arm` returns (`ArmMoments`), as the analysis
 * does: X is the unit's value (0/1 success, the sum of values, or a ratio's numerator), Y the ratio's denominator (the
 * unit's turns), C the unit's pre-period sum (the CUPED covariate). It also keeps the per-TURN sums a naive analysis
 * would use (every turn as if independent), only to show what that gets wrong.
 *
 * @example
 * const arm = new ArmAccumulator();
 * arm.addUnit({ x: period.valueSum, y: period.turns, c: pre.valueSum, turnSquares: period.valueSquares });
 * compareArms(control.moments(), arm.moments(), { kind: 'ratio', direction: 'decrease' });
 */
import type { ArmMoments } from '../../lib/shared/statistics/moments.ts';

export interface UnitValues {
  /** X: the unit's value (or a ratio's numerator). */
  x: number;
  /** Y: a ratio's denominator (turns). */
  y?: number;
  /** C: the pre-period covariate. */
  c?: number;
  /** Σ of squared per-turn values (the naive per-turn interval's input). */
  turnSquares?: number;
}

export class ArmAccumulator {
  units = 0;
  sumX = 0;
  sumX2 = 0;
  sumY = 0;
  sumY2 = 0;
  sumXY = 0;
  sumC = 0;
  sumC2 = 0;
  sumXC = 0;
  /** Σ over turns of value² (with sumX and sumY: the per-turn mean and sd a naive analysis uses). */
  sumTurnSquares = 0;

  addUnit(values: UnitValues): void {
    const { x } = values;
    this.units++;
    this.sumX += x;
    this.sumX2 += x * x;
    if (values.y !== undefined) {
      this.sumY += values.y;
      this.sumY2 += values.y * values.y;
      this.sumXY += x * values.y;
    }
    if (values.c !== undefined) {
      this.sumC += values.c;
      this.sumC2 += values.c * values.c;
      this.sumXC += x * values.c;
    }
    if (values.turnSquares !== undefined) this.sumTurnSquares += values.turnSquares;
  }

  /** The moments for the statistics module: `ratio` adds Y, `cuped` adds C (absent sums read as "not collected"). */
  moments(options: { ratio?: boolean; cuped?: boolean } = {}): ArmMoments {
    const m: ArmMoments = { units: this.units, sumX: this.sumX, sumX2: this.sumX2 };
    if (options.ratio) Object.assign(m, { sumY: this.sumY, sumY2: this.sumY2, sumXY: this.sumXY });
    if (options.cuped) Object.assign(m, { sumC: this.sumC, sumC2: this.sumC2, sumXC: this.sumXC });
    return m;
  }
}
