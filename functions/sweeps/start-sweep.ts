/** Starts a sweep from the stage's schedule or a `checkpoint.registered` event (lib/sweeps/workflow/start-sweep-from-trigger.ts). */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { sweepSettingsFromEnv } from '../../lib/sweeps/sweep-settings.ts';
import { startSweepFromTrigger, type SweepTriggerEvent } from '../../lib/sweeps/workflow/start-sweep-from-trigger.ts';
import { observability } from '../observability.ts';

const obs = observability('sweeps-start');
const ports = { ...awsPortsFromEnv(), workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };
const settings = sweepSettingsFromEnv();

export const handler = middy(async (event: SweepTriggerEvent) => {
  const started = await startSweepFromTrigger(ports, event, settings);
  if (!started) {
    obs.logger.info('no sweep asked for');
    return { skipped: true };
  }
  if ('refused' in started) {
    // Told to people through sweep.refused; answered, not thrown, so the delivery is not retried in vain.
    obs.logger.warn('sweep refused', started.refused);
    return started;
  }
  obs.logger.info('sweep started', { sweepId: started.sweepId, executionId: started.executionId });
  return { sweepId: started.sweepId, executionId: started.executionId };
}).use(obs.middlewares);
