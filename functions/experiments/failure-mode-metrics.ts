/** Failure modes as metrics: `failure-modes.labelled` (EventBridge rule → SQS) → `failure_mode.<mode>` rows in the raw archive. */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { makeFailureModeMetricsHandler } from '../../lib/experiments/consumers/failure-mode-metrics-consumer.ts';
import { observability } from '../observability.ts';

const obs = observability('experiments-failure-mode-metrics');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = middy(makeFailureModeMetricsHandler(ports)).use(obs.middlewares);
