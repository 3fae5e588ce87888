/** The compute accounting API (every route of `compute/api` in the route table): jobs, usage per category, budgets. */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('compute-api');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('compute/api'), ports).use(obs.middlewares);
