/** Sweep step `compare-incumbent` (state machine `sweep`, lib/sweeps/workflow/sweep.asl.ts). */
import { sweepStepLambda } from './sweep-step-lambda.ts';

export const handler = sweepStepLambda('compare-incumbent');
