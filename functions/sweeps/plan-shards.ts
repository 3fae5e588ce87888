/** Sweep step `plan-shards` (state machine `sweep`, lib/sweeps/workflow/sweep.asl.ts). */
import { sweepStepLambda } from './sweep-step-lambda.ts';

export const handler = sweepStepLambda('plan-shards');
