/**
 * POST /v1/sweeps, GET /v1/sweeps/{id}: start a sweep through the workflows port (Step Functions; the state machine
 * ARN comes from FLYWHEEL_STATE_MACHINE_SWEEP), read its report.
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { observability } from '../observability.ts';

const obs = observability('registry-sweeps-api');
const ports = { ...awsPortsFromEnv(), workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('registry/sweeps-api'), ports).use(obs.middlewares);
