/** The drift-watch consumer: `judge.verdict` (EventBridge rule → SQS) → disagreements and a sample queued for people. */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { makeWatchVerdictsHandler, watchOptionsFromEnv } from '../../lib/judges/drift/consumers/watch-verdicts-consumer.ts';
import { observability } from '../observability.ts';

const obs = observability('judges-drift-watch');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = middy(makeWatchVerdictsHandler(ports, watchOptionsFromEnv())).use(obs.middlewares);
