/**
 * Every step of the judge derivation state machine (`derive-judges`, lib/judges/workflow/derive-judges.asl.ts): the
 * payload `{ step, input }` names the step. AWS drivers built once per process; the judges run through the models
 * port (Bedrock or an OpenAI-compatible endpoint), reward models are scored in process from S3.
 */
import middy from '@middy/core';
import { awsPortsFromEnv } from '../../lib/drivers/aws/aws-ports.ts';
import { defaultJudgeRunners, deriveSettingsFromEnv } from '../../lib/judges/derive/judge-runners.ts';
import { dispatchDeriveStep, type DeriveStepPorts } from '../../lib/judges/workflow/derive-steps.ts';
import { observability } from '../observability.ts';

const obs = observability('judges-derive-step');
const base = { ...awsPortsFromEnv(), metrics: obs.metricsPort };
const settings = deriveSettingsFromEnv();
const ports: DeriveStepPorts = { ...base, settings, runners: defaultJudgeRunners(base, settings) };

export const handler = middy(async (payload: unknown) => dispatchDeriveStep(ports, payload)).use(obs.middlewares);
