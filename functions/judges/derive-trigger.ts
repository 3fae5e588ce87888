/** Starts a judge derivation for a checkpoint registered as the top model (lib/judges/workflow/start-derivation-from-trigger.ts). */
import middy from '@middy/core';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { startDerivationFromTrigger, type TopCheckpointEvent } from '../../lib/judges/workflow/start-derivation-from-trigger.ts';
import { observability } from '../observability.ts';

const obs = observability('judges-derive-trigger');
const ports = { workflows: StepFunctionsWorkflows.fromEnv() };

export const handler = middy(async (event: TopCheckpointEvent) => {
  const started = await startDerivationFromTrigger(ports, event);
  if (!started) {
    obs.logger.info('not a top model: no derivation');
    return { skipped: true };
  }
  obs.logger.info('judge derivation started', started);
  return started;
}).use(obs.middlewares);
