/**
 * The experiments schedule, invoked by EventBridge Scheduler (lib/experiments/infra/experiments.ts): every tenant's
 * running experiments analysed on Athena and acted on (lib/experiments/schedule/run-experiment-schedule.ts); notices
 * are logged and posted to Slack when FLYWHEEL_SLACK_WEBHOOK_URL is set.
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { ConfigurationError, TransientError } from '../../lib/errors.ts';
import { runExperimentScheduleForAllTenants } from '../../lib/experiments/schedule/run-experiment-schedule.ts';
import { observability } from '../observability.ts';

const obs = observability('experiments-schedule');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const { query } = ports;
if (!query) throw new ConfigurationError('Missing FLYWHEEL_ATHENA_WORKGROUP / FLYWHEEL_GLUE_DATABASE: the schedule analyses on Athena');

export const handler = middy(async () => {
  const runs = await runExperimentScheduleForAllTenants({ ...ports, query });
  const failed = runs.flatMap((r) => [
    ...(r.error ? [{ tenant: r.tenant, error: r.error }] : []),
    ...r.experiments.filter((e) => e.error).map((e) => ({ tenant: r.tenant, experimentId: e.experimentId, error: e.error })),
  ]);
  for (const f of failed) obs.logger.error('experiment schedule failed for an experiment', f);
  // The others ran; the invocation still fails, so the function's error alarm tells people (the next tick tries again).
  if (failed.length > 0) throw new TransientError(`the experiments schedule failed for ${failed.length} experiment(s) or tenant(s); see the log`);
  return { tenants: runs.length, experiments: runs.reduce((n, r) => n + r.experiments.length, 0), failed: failed.length };
}).use(obs.middlewares);
