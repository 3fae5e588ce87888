/** Compute accounting: Batch job state changes (EventBridge rule on the default bus → SQS) → job usage, per-day usage, budget notices. */
import middy from '@middy/core';
import { makeJobEventsHandler } from '../../lib/compute/consumers/job-events-consumer.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('compute-job-events');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = middy(makeJobEventsHandler(ports)).use(obs.middlewares);
