/**
 * The experiments API (every route of `experiments/api` in the route table): metric definitions, experiments and
 * their lifecycle, analyses on Athena (FLYWHEEL_ATHENA_WORKGROUP, FLYWHEEL_GLUE_DATABASE) and their lift charts, and
 * decisions (ship sets the registry incumbent).
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('experiments-api');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('experiments/api'), ports).use(obs.middlewares);
