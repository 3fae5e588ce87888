/**
 * The Lambda entry of one sweep step: AWS drivers built once per process, the step's use case
 * (`sweepStepHandlers()`, settings from the stage and the environment), Powertools through middy. The state machine
 * invokes it with the step's input as the payload and reads the answer as `$.Payload`.
 *
 * Where the function's environment names the rollout job definition (`FLYWHEEL_ROLLOUT_JOB_DEFINITION`, plan-shards
 * only), the steps get the job definitions of environment images (`BatchImageDefinitions` over it): plan-shards
 * registers the clone for each image its tasks name, and the state machine submits those shards to it.
 */
import { BatchClient } from '@aws-sdk/client-batch';
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { BatchImageDefinitions } from '../../lib/drivers/aws/batch-jobs.ts';
import { sweepStepHandlers } from '../../lib/sweeps/sweep-step-handlers.ts';
import { ROLLOUT_JOB_DEFINITION_VARIABLE, type ImageJobDefinitions, type SweepStepIo, type SweepStepName } from '../../lib/sweeps/workflow/sweep-steps.ts';
import { observability } from '../observability.ts';

export function imageDefinitionsFromEnv(env: Record<string, string | undefined> = process.env): ImageJobDefinitions | undefined {
  const rollout = env[ROLLOUT_JOB_DEFINITION_VARIABLE];
  if (!rollout) return undefined;
  const definitions = new BatchImageDefinitions(new BatchClient({}));
  return { forImage: (image) => definitions.definitionFor(rollout, image) };
}

export function sweepStepLambda<K extends SweepStepName>(step: K) {
  const obs = observability(`sweeps-${step}`);
  const imageDefinitions = imageDefinitionsFromEnv();
  const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort, ...(imageDefinitions ? { imageDefinitions } : {}) };
  const run = sweepStepHandlers()[step] as (p: typeof ports, input: SweepStepIo[K][0]) => Promise<SweepStepIo[K][1]>;
  return middy(async (input: SweepStepIo[K][0]) => run(ports, input)).use(obs.middlewares);
}
