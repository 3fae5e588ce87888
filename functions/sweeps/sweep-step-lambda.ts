/**
 * The Lambda entry of one sweep step: AWS drivers built once per process, the step's use case
 * (`sweepStepHandlers()`, settings from the stage and the environment), Powertools through middy. The state machine
 * invokes it with the step's input as the payload and reads the answer as `$.Payload`.
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import type { SweepStepIo, SweepStepName } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { observability } from '../observability.ts';

export function sweepStepLambda<K extends SweepStepName>(step: K) {
  const obs = observability(`sweeps-${step}`);
  const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
  const run = sweepStepHandlers()[step] as (p: typeof ports, input: SweepStepIo[K][0]) => Promise<SweepStepIo[K][1]>;
  return middy(async (input: SweepStepIo[K][0]) => run(ports, input)).use(obs.middlewares);
}
