/**
 * Which modes a classification names, from calibrated per-mode probabilities.
 *
 * Most signals have one failure mode, some have two or three, a few (praise) none. Independent "p ≥ 0.5" cut-offs
 * under-label (a comment split between two plausible modes gets neither), so the rule is: the most probable mode when
 * its probability reaches `topFloor`, plus every other mode at or above `extraThreshold`. Both are chosen on
 * validation (out-of-fold) predictions to maximise micro-F1.
 */
export interface DecisionRule {
  topFloor: number;
  extraThreshold: number;
}

/** Indices of the chosen modes. */
export function decide(probabilities: readonly number[], rule: DecisionRule): boolean[] {
  let top = -1;
  let best = -1;
  probabilities.forEach((p, i) => {
    if (p > best) {
      best = p;
      top = i;
    }
  });
  return probabilities.map((p, i) => (i === top ? p >= rule.topFloor : p >= rule.extraThreshold));
}

const TOP_FLOORS = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5];
const EXTRA_THRESHOLDS = [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6];

/** Micro-F1 of a rule over items (probabilities per mode) against truth (booleans per mode). */
export function microF1(probabilities: readonly (readonly number[])[], truth: readonly (readonly boolean[])[], rule: DecisionRule): number {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  probabilities.forEach((ps, i) => {
    const pred = decide(ps, rule);
    pred.forEach((p, m) => {
      const t = truth[i]![m]!;
      if (p && t) tp++;
      else if (p) fp++;
      else if (t) fn++;
    });
  });
  return tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
}

/** The grid point with the best validation micro-F1; ties go to the higher (more conservative) thresholds. */
export function chooseDecisionRule(probabilities: readonly (readonly number[])[], truth: readonly (readonly boolean[])[]): DecisionRule & { microF1: number } {
  let best = { topFloor: 0.5, extraThreshold: 0.5, microF1: -1 };
  for (const topFloor of TOP_FLOORS) {
    for (const extraThreshold of EXTRA_THRESHOLDS) {
      const f = microF1(probabilities, truth, { topFloor, extraThreshold });
      if (f >= best.microF1) best = { topFloor, extraThreshold, microF1: f };
    }
  }
  return best;
}
