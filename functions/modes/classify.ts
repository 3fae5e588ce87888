/** The classify consumer: `feedback.stored` / `report.stored` (EventBridge rule → SQS) → chain → labels and counts. */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { makeClassifyStoredHandler } from '../../lib/modes/consumers/classify-stored.ts';
import { storedClassifier } from '../../lib/modes/current-classifier.ts';
import { modesModelsFromEnv } from '../../lib/modes/modes-models.ts';
import { observability } from '../observability.ts';

const obs = observability('modes-classify');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const models = modesModelsFromEnv();

export const handler = middy(
  makeClassifyStoredHandler({
    ports,
    classifier: storedClassifier(ports),
    ...(models.judge ? { judge: models.judge } : {}),
    ...(models.embedder ? { embedder: models.embedder } : {}),
  }),
).use(obs.middlewares);
