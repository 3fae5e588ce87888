/**
 * POST /v1/checkpoints, GET /v1/checkpoints, POST /v1/suites, GET /v1/suites, GET /v1/suites/{id},
 * POST /v1/suites/{id}/retire, GET /v1/results: the registry.
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('registry-api');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('registry/api'), ports).use(obs.middlewares);
