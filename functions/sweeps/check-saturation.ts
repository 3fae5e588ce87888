/** Sweep step `check-saturation` (state machine `sweep`, lib/sweeps/workflow/sweep.asl.ts). */
import { sweepStepLambda } from './sweep-step-lambda.ts';

export const handler = sweepStepLambda('check-saturation');
