/**
 * Every step of the training state machine (`train-policy`, lib/training/workflow/train.asl.ts): the payload
 * `{ step, input }` names the step. AWS drivers built once per process; the dataset is built in this function
 * (`buildDataset`), the checkpoint's sweep is looked up through the workflows port (FLYWHEEL_STATE_MACHINE_SWEEP), and
 * people are told through `raiseNotice` (`lib/people/notices/`: stored once, then Slack and the bus).
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { StepFunctionsWorkflows } from '../../lib/drivers/aws/step-functions-workflows.ts';
import { buildDataset } from '../../lib/training/datasets/build-dataset.ts';
import { dispatchTrainStep, type TrainStepPorts } from '../../lib/training/workflow/train-steps.ts';
import { observability } from '../observability.ts';

const obs = observability('training-step');
// No jobs port: the trainer job runs under the state machine (`.sync`), which ends it; a failed run's job has ended.
const base = { ...awsPortsFromEnv(), workflows: StepFunctionsWorkflows.fromEnv(), metrics: obs.metricsPort };
const ports: TrainStepPorts = { ...base, buildDataset: (p, input) => buildDataset(p, input), settings: { multiNode: true } };

export const handler = middy(async (payload: unknown) => dispatchTrainStep(ports, payload)).use(obs.middlewares);
