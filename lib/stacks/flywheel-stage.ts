import { type App, Stage, type StageProps, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import type { RouteSpec } from '../api/route.ts';
import { getStageSettings, type StageSettings } from '../config/stages.ts';
import { ApiStack } from './api-stack.ts';
import { ComputeStack } from './compute-stack.ts';
import { DataStack } from './data-stack.ts';
import { PipelineStack } from './pipeline-stack.ts';
import { WorkflowsStack } from './workflows-stack.ts';

export interface FlywheelStageProps extends StageProps {
  settings: StageSettings;
  routes: readonly RouteSpec[];
}

/**
 * One deployment of Flywheel: `Flywheel-<stage>` holding the stateful Data stack and the stateless Pipeline, Api,
 * Compute and Workflows stacks (stack names `Flywheel-<stage>-Data`, `-Pipeline`, `-Api`, `-Compute`, `-Workflows`).
 */
export class FlywheelStage extends Stage {
  readonly data: DataStack;
  readonly pipeline: PipelineStack;
  readonly api: ApiStack;
  readonly compute: ComputeStack;
  readonly workflows: WorkflowsStack;

  constructor(scope: Construct, id: string, props: FlywheelStageProps) {
    super(scope, id, props);
    const { settings } = props;
    this.data = new DataStack(this, 'Data', { settings, description: `Flywheel ${settings.stage}: stateful (records, blobs, queues)` });
    this.pipeline = new PipelineStack(this, 'Pipeline', {
      settings,
      data: this.data,
      description: `Flywheel ${settings.stage}: ingestion processor, event bus, alarms`,
    });
    this.api = new ApiStack(this, 'Api', {
      settings,
      data: this.data,
      bus: this.pipeline.bus,
      alarmTopic: this.pipeline.alarmTopic,
      routes: props.routes,
      description: `Flywheel ${settings.stage}: feedback API`,
    });
    this.compute = new ComputeStack(this, 'Compute', {
      settings,
      data: this.data,
      bus: this.pipeline.bus,
      alarmTopic: this.pipeline.alarmTopic,
      description: `Flywheel ${settings.stage}: AWS Batch (network, fair-share GPU and CPU pools, rollout and forge jobs)`,
    });
    this.workflows = new WorkflowsStack(this, 'Workflows', {
      settings,
      data: this.data,
      compute: this.compute,
      bus: this.pipeline.bus,
      alarmTopic: this.pipeline.alarmTopic,
      description: `Flywheel ${settings.stage}: eval sweep state machine, its schedule and checkpoint trigger`,
    });
  }
}

/**
 * Adds the `Flywheel-<stage>` stage to the app and holds the whole app to cdk-nag's AwsSolutions pack (synth fails on
 * any unacknowledged finding). `local` is the laptop runtime's stage, not a deployment.
 */
export function addFlywheelStage(app: App, stageName: string, routes: readonly RouteSpec[]): FlywheelStage {
  const settings = getStageSettings(stageName);
  if (settings.stage === 'local') throw new Error('Stage "local" runs on a laptop (npm start); deploy dev or prod');
  const stage = new FlywheelStage(app, `Flywheel-${settings.stage}`, {
    settings,
    routes,
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stage;
}
