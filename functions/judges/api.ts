/**
 * The judges API (every route of `judges/api` in the route table): the judge registry (GET /v1/judges, GET
 * /v1/judges/{name}, POST /v1/judges, POST /v1/judges/{name}/promote, POST /v1/judges/{name}/retire,
 * GET /v1/judges/{name}/calibrations) and the other judges routes served by the same function.
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('judges-api');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('judges/api'), ports).use(obs.middlewares);
