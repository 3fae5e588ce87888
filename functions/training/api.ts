/**
 * The training API (every route of `training/api` in the route table): start, list, read, stop and resume training
 * runs, and a run's curves as JSON or a PNG. The state machine's ARN comes from FLYWHEEL_STATE_MACHINE_TRAIN_POLICY.
 */
import { makeDispatcher } from '../../lib/api/dispatch.ts';
import { routesOf } from '../../lib/api/routes.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { observability } from '../observability.ts';

const obs = observability('training-api');
// No jobs port: stopping a run's execution stops its `.sync` trainer job (Step Functions terminates it).
const ports = { ...awsPortsFromEnv(), workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };

export const handler = makeDispatcher(routesOf('training/api'), ports).use(obs.middlewares);
