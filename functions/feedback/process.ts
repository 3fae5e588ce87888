/** The ingestion queue consumer: store, archive, publish; partial batch failures reported to SQS. */
import middy from '@middy/core';
import { makeProcessFeedbackHandler } from '../../lib/feedback/consumers/process-feedback.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('feedback-process');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = middy(makeProcessFeedbackHandler(ports)).use(obs.middlewares);
