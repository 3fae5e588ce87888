/**
 * One statistics module for experiments and sweeps: normal, Student's t and chi-squared distributions, Wilson intervals, arm
 * comparisons (delta method, CUPED, confidence sequences, chance to win), sample-ratio mismatch, multiple-testing
 * adjustments, power, and the minimum-sample rules users read.
 */
export { Z95, normalCdf, normalQuantile } from './normal.ts';
export { wilsonInterval, type Interval } from './wilson.ts';
export { sampleCovariance, sampleVariance, type ArmMoments } from './moments.ts';
export { armValue, compareArms, pooledCupedTheta, type ArmComparison, type CompareOptions, type MetricKind } from './compare-arms.ts';
export { confidenceSequenceHalfWidth, sequentialRho } from './sequential.ts';
export { SRM_THRESHOLD, chiSquaredSurvival, sampleRatioMismatch } from './srm.ts';
export { benjaminiHochbergAdjust, holmAdjust } from './multiple-testing.ts';
export { powerAt, unitsPerArm, type PowerInput } from './power.ts';
export { MIN_TASKS_FOR_SATURATION, MIN_TASKS_FOR_VERDICT, MIN_UNITS_PER_ARM, SAMPLE_RULES } from './minimum-sample.ts';
export { studentTCdf, studentTQuantile } from './student-t.ts';
export { logGamma, regularizedGammaP, regularizedGammaQ } from './incomplete-gamma.ts';
export { logBeta, regularizedBeta } from './incomplete-beta.ts';
