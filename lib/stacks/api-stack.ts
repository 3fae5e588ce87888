import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { RouteSpec } from '../api/route.ts';
import type { StageSettings } from '../config/stages.ts';
import { FlywheelFunction, retentionDays } from '../constructs/flywheel-function.ts';
import { RouteTableApi } from '../constructs/route-table-api.ts';
import { ApiWaf } from '../constructs/api-waf.ts';
import { addApiKeyAuthorizer } from '../auth/infra/api-key-authorizer.ts';
import type { DataStack } from './data-stack.ts';
import { grantSweepExecutions } from '../sweeps/infra/grant-sweep-executions.ts';
import { functionEnvironment } from './function-environment.ts';
import { grantBedrockModels } from '../modes/infra/modes-pipeline.ts';
import { EMBEDDING_MODEL_ENV, JUDGE_MODEL_ENV } from '../modes/modes-models.ts';
import { judgePricingEnvironment } from '../judges/derive/judge-runners.ts';
import { grantTrainingExecutions } from '../training/infra/grant-training-executions.ts';
import { grantAssignments, grantExperimentsApi } from '../experiments/infra/experiments.ts';
import { grantSlackEndpoints } from '../people/infra/slack-bot.ts';

/**
 * What each API function may touch, by its `lambda` name in the route table. A route served by a function not listed
 * here fails the synth: new functions get their access reviewed, never a default.
 */
export const API_FUNCTION_ACCESS: Readonly<Record<string, (fn: FlywheelFunction, data: DataStack, deps?: { bus: IEventBus; settings: StageSettings }) => void>> = {
  // Validates, then makes the request durable: the queue, and a blob for bodies over the message limit.
  'feedback/ingest': (fn, data) => fn.sendToQueue(data.ingest.queue).writeBlobs(data.blobs),
  // Reads records, and blobs for trajectories stored by reference.
  'feedback/query': (fn, data) => fn.readRecords(data.records).readBlobs(data.blobs),
  // Serves the OpenAPI document generated from the schemas: touches nothing.
  'api/openapi': () => {},
  // Registers checkpoints (conditional puts), lists checkpoints, suites and results; publishes checkpoint.registered.
  // The console's attempt viewer reads trajectories and diffs (blobs); the overview stores its hour and day counts.
  'registry/api': (fn, data, deps) => {
    fn.readWriteRecords(data.records).readBlobs(data.blobs);
    if (deps?.bus) fn.publishEvents(deps.bus);
  },
  // Reads sweeps and their results, records the execution a POST started; starts and describes sweep executions.
  'registry/sweeps-api': (fn, data, deps) => {
    fn.readWriteRecords(data.records).readBlobs(data.blobs);
    if (deps?.settings) grantSweepExecutions(fn, deps.settings);
  },
  // Failure modes: reads counts, examples and clusters; writes human labels, review resolutions and cluster snapshots.
  // Eval drafts call the judge model (context `judgeModel`), InvokeModel granted only on a Bedrock model it names, and
  // raise a decision notice (records; `notice.raised` on the bus).
  'modes/query': (fn, data, deps) => {
    fn.readWriteRecords(data.records).readBlobs(data.blobs);
    if (deps?.bus) fn.publishEvents(deps.bus);
    const judgeModel = fn.node.tryGetContext('judgeModel') as string | undefined;
    const embeddingModel = fn.node.tryGetContext('embeddingModel') as string | undefined;
    if (judgeModel) fn.fn.addEnvironment(JUDGE_MODEL_ENV, judgeModel);
    if (embeddingModel) fn.fn.addEnvironment(EMBEDDING_MODEL_ENV, embeddingModel);
    grantBedrockModels(fn, judgeModel);
  },
  // The judge registry: registers versions, promotes and retires them (conditional writes on the records table),
  // reads calibration reports; publishes judge.promoted and judge.demoted.
  'judges/api': (fn, data, deps) => {
    fn.readWriteRecords(data.records);
    if (deps?.bus) fn.publishEvents(deps.bus);
    // Annotation queues and calibration read signals' and attempts' blobs (trajectories, diffs); calibrating a
    // failure-mode judge calls the judge model (context `judgeModel`), InvokeModel granted only on a Bedrock model it names.
    fn.readBlobs(data.blobs);
    const judgeModel = fn.node.tryGetContext('judgeModel') as string | undefined;
    if (judgeModel) fn.fn.addEnvironment(JUDGE_MODEL_ENV, judgeModel);
    grantBedrockModels(fn, judgeModel);
    // Calibration reports' cost per verdict: the stage's judge prices (FLYWHEEL_JUDGE_PRICING).
    for (const [name, value] of Object.entries(judgePricingEnvironment(deps?.settings.judges.pricing ?? []))) fn.fn.addEnvironment(name, value);
  },
  // Training runs: records them, reads their metrics (curves); starts, describes, redrives and stops their executions.
  // Decision records: reads attempts, tasks, feedback events and trajectories, writes the records (a Bedrock locator
  // model is not granted: name an OpenAI-compatible one).
  'training/api': (fn, data, deps) => {
    fn.readWriteRecords(data.records).readBlobs(data.blobs);
    if (deps?.settings) grantTrainingExecutions(fn, deps.settings);
  },
  // Experiments: metric definitions, experiments and their lifecycle, analyses on Athena (the archive tables and
  // workgroup), lift charts under experiments/, decisions (ship sets the incumbent; experiment.decided on the bus).
  'experiments/api': (fn, data, deps) => grantExperimentsApi(fn, data, deps?.bus),
  // Assignments: reads the running experiments; writes nothing.
  'experiments/assign': (fn, data) => grantAssignments(fn, data),
  // access console: files
  // The console's page and files, bundled beside the handler: touches nothing.
  'console/assets': () => {},
  // access people: slack
  // The Slack endpoints: verify the signature (the stage's signing secret), publish people.slack.work for the worker.
  'people/slack': (fn, _data, deps) => grantSlackEndpoints(fn, deps),
  // access people: notices
  // Notices: lists, reads, acknowledges and resolves them (records); answering one runs its decision's operation as the
  // operation's own route would: approve an eval draft (records, blobs), start or decide an experiment (records, the
  // bus), retire a suite (records), resume or stop a training run (its executions).
  'people/api': (fn, data, deps) => {
    fn.readWriteRecords(data.records).readBlobs(data.blobs);
    if (deps?.bus) fn.publishEvents(deps.bus);
    if (deps?.settings) grantTrainingExecutions(fn, deps.settings);
  },
  // access compute: usage and budgets
  // Compute accounting: reads jobs' usage and budgets, writes budgets (records only).
  'compute/api': (fn, data) => fn.readWriteRecords(data.records),
};

export interface ApiStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
  bus: IEventBus;
  alarmTopic: ITopic;
  routes: readonly RouteSpec[];
}

/** The stateless API stack: the REST API built from the route table, its functions, their error alarms. */
export class ApiStack extends Stack {
  readonly api: RouteTableApi;
  /** The web ACL in front of the API stage (rate limits per IP, AWS managed rules). */
  readonly waf: ApiWaf;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { settings, data } = props;
    const environment = functionEnvironment(data, props.bus);

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    this.api = new RouteTableApi(this, 'Feedback', {
      settings,
      routes: props.routes,
      accessLogs,
      functionFor: (lambda) => {
        const grant = API_FUNCTION_ACCESS[lambda];
        if (!grant) throw new Error(`No access is declared for API function "${lambda}" (API_FUNCTION_ACCESS in lib/stacks/api-stack.ts)`);
        const fn = new FlywheelFunction(this, functionId(lambda), { lambda, settings, environment });
        grant(fn, data, { bus: props.bus, settings });
        fn.alarmOnErrors(props.alarmTopic, settings.alarms.handlerErrorThreshold);
        return fn;
      },
    });

    this.waf = new ApiWaf(this, 'Waf', { settings, stage: this.api.api.deploymentStage });
    // Every method: key → tenant and scopes (Lambda REQUEST authorizer over the key records; lib/auth/).
    addApiKeyAuthorizer(this, { settings, api: this.api, records: data.records, environment, alarmTopic: props.alarmTopic });

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'Base URL of the Flywheel API (stage included)' });
    new CfnOutput(this, 'UsagePlanId', {
      value: this.api.usagePlan.usagePlanId,
      description: 'Usage plan to which team API keys are added (aws apigateway create-usage-plan-key)',
    });
  }
}

/** `feedback/ingest` → `FeedbackIngest`. */
function functionId(lambda: string): string {
  return lambda
    .split(/[/-]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
