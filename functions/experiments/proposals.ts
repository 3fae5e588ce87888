/** The proposals consumer: `experiment.proposed` (EventBridge rule → SQS) → a draft experiment a person approves. */
import middy from '@middy/core';
import { getStageSettings } from '../../lib/config/stages.ts';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { makeProposedExperimentHandler } from '../../lib/experiments/proposals/proposed-experiment-consumer.ts';
import { observability } from '../observability.ts';

const obs = observability('experiments-proposals');
const ports = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const settings = getStageSettings(process.env.FLYWHEEL_STAGE ?? 'dev').experiments;

export const handler = middy(makeProposedExperimentHandler(ports, { plannedUnitsPerArm: settings.proposalUnitsPerArm })).use(obs.middlewares);
