/**
 * POST /v1/assignments: deterministic arms for units, answered from the running experiments held in memory between
 * reads of the records table (a warm function answers without a read).
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { observability } from '../observability.ts';

const obs = observability('experiments-assign');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('experiments/assign'), ports).use(obs.middlewares);
