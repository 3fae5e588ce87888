import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { BatchNetwork } from '../compute/infra/batch-network.ts';
import { FairSharePool } from '../compute/infra/fair-share-pool.ts';
import { RunnableTimeoutReport } from '../compute/infra/runnable-timeout-report.ts';
import { JobUsageEvents } from '../compute/infra/job-usage-events.ts';
import type { StageSettings } from '../config/stages.ts';
import { retentionDays } from '../constructs/flywheel-function.ts';
import type { JobImage } from '../constructs/job-image.ts';
import { addForgeJob } from '../forge/infra/forge-job.ts';
import { addRolloutJob } from '../rollout/infra/rollout-job.ts';
import { ROLLOUT_ATTEMPT_TIMEOUT_SECONDS, ROLLOUT_JOB_ATTEMPTS } from '../sweeps/workflow/sweep.asl.ts';
import type { DataStack } from './data-stack.ts';
import { functionEnvironment } from './function-environment.ts';

export interface ComputeStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
  bus: IEventBus;
  alarmTopic: ITopic;
}

/**
 * AWS Batch for the stage. The pools (`lib/compute/infra/`): the jobs' network, one fair-share pool per hardware
 * pool (GPU for rollouts and training, CPU for grading and the forge) and the report of jobs cancelled for waiting
 * RUNNABLE too long. The jobs that run on them, each its capability's (`lib/rollout/infra/rollout-job.ts`,
 * `lib/forge/infra/forge-job.ts`): an image with its job definition and a role granted the job's key families; and
 * the jobs' log group.
 */
export class ComputeStack extends Stack {
  readonly network: BatchNetwork;
  readonly gpu: FairSharePool;
  readonly cpu: FairSharePool;
  readonly rollout: JobImage;
  readonly forge: JobImage;
  readonly jobLogs: LogGroup;
  readonly jobUsage: JobUsageEvents;

  /**
   * Two AZs of the region chosen by CloudFormation (Fn::GetAZs) when the stack deploys, not looked up at synth: the
   * template names no literal AZ and synth needs no AWS account (the override Stack documents for this).
   */
  override get availabilityZones(): string[] {
    return [0, 1].map((i) => Fn.select(i, Fn.getAzs()));
  }

  constructor(scope: Construct, id: string, props: ComputeStackProps) {
    super(scope, id, props);
    const { settings, data } = props;
    this.network = new BatchNetwork(this, 'Network', { settings });
    this.gpu = new FairSharePool(this, 'GpuPool', { settings, pool: 'gpu', network: this.network });
    this.cpu = new FairSharePool(this, 'CpuPool', { settings, pool: 'cpu', network: this.network });
    this.jobLogs = new LogGroup(this, 'JobLogs', {
      retention: retentionDays(settings.logRetentionDays),
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    const environment = functionEnvironment(data, props.bus);
    this.rollout = addRolloutJob(this, {
      settings,
      data,
      environment,
      logGroup: this.jobLogs,
      attemptTimeout: Duration.seconds(ROLLOUT_ATTEMPT_TIMEOUT_SECONDS),
      attempts: ROLLOUT_JOB_ATTEMPTS,
    });
    this.forge = addForgeJob(this, { settings, data, environment, logGroup: this.jobLogs });
    new RunnableTimeoutReport(this, 'RunnableTimeouts', { pools: [this.gpu, this.cpu], alarmTopic: props.alarmTopic });
    // Compute accounting: Batch job state changes of these queues → job usage and budgets (lib/compute/infra/job-usage-events.ts).
    this.jobUsage = new JobUsageEvents(this, 'JobUsage', { settings, queues: [this.gpu.queue, this.cpu.queue], records: data.records, bus: props.bus, alarmTopic: props.alarmTopic, environment });

    new CfnOutput(this, 'GpuJobQueueArn', { value: this.gpu.queue.jobQueueArn, description: 'Fair-share job queue of the GPU pool' });
    new CfnOutput(this, 'CpuJobQueueArn', { value: this.cpu.queue.jobQueueArn, description: 'Fair-share job queue of the CPU pool' });
    new CfnOutput(this, 'RolloutRepositoryUri', { value: this.rollout.repository.repositoryUri, description: 'Push the rollout image here (batch-images/rollout)' });
    new CfnOutput(this, 'ForgeRepositoryUri', { value: this.forge.repository.repositoryUri, description: 'Push the forge image here (batch-images/forge)' });
  }
}
