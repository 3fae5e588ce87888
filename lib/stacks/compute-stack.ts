import { CfnOutput, Duration, Fn, RemovalPolicy, Size, Stack, type StackProps } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { BatchNetwork } from '../compute/infra/batch-network.ts';
import { FairSharePool } from '../compute/infra/fair-share-pool.ts';
import { FORGE_JOB_ACCESS, grantJobAccess, rolloutJobAccess } from '../compute/infra/job-access.ts';
import { JobImage } from '../compute/infra/job-image.ts';
import { RunnableTimeoutReport } from '../compute/infra/runnable-timeout-report.ts';
import type { StageSettings } from '../config/stages.ts';
import { retentionDays } from '../constructs/flywheel-function.ts';
import { ROLLOUT_ATTEMPT_TIMEOUT_SECONDS, ROLLOUT_JOB_ATTEMPTS } from '../sweeps/workflow/sweep.asl.ts';
import type { DataStack } from './data-stack.ts';
import { functionEnvironment } from './function-environment.ts';

const JOB_KEY_REASON =
  'Job blob keys hold the run id, known only when the job is submitted (a job role takes no per-job session policy): objects are granted per key family of this one bucket (specs, tasks, results, trajectories), never the whole bucket or another bucket.';

export interface ComputeStackProps extends StackProps {
  settings: StageSettings;
  data: DataStack;
  bus: IEventBus;
  alarmTopic: ITopic;
}

/**
 * AWS Batch for the stage: the jobs' network, one fair-share pool per hardware pool (GPU for rollouts and training,
 * CPU for grading and the forge), the rollout and forge images with their job definitions, their log group, and the
 * report of jobs cancelled for waiting RUNNABLE too long.
 */
export class ComputeStack extends Stack {
  readonly network: BatchNetwork;
  readonly gpu: FairSharePool;
  readonly cpu: FairSharePool;
  readonly rollout: JobImage;
  readonly forge: JobImage;
  readonly jobLogs: LogGroup;

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
    this.rollout = new JobImage(this, 'Rollout', {
      settings,
      name: 'rollout',
      vcpus: 8,
      memory: Size.gibibytes(30),
      // The default: the sweep's Batch task overrides it per shard with the checkpoint's `serving.gpus`
      // (SHARD_JOB_RESOURCES in lib/sweeps/workflow/sweep.asl.ts).
      gpus: 1,
      environment,
      logGroup: this.jobLogs,
      attemptTimeout: Duration.seconds(ROLLOUT_ATTEMPT_TIMEOUT_SECONDS),
      attempts: ROLLOUT_JOB_ATTEMPTS,
      description: 'One shard of an eval sweep: attempts in the strict harness, the checkpoint served beside them',
    });
    this.forge = new JobImage(this, 'Forge', {
      settings,
      name: 'forge',
      vcpus: 4,
      memory: Size.gibibytes(8),
      environment,
      logGroup: this.jobLogs,
      attemptTimeout: Duration.hours(2),
      attempts: 3,
      description: 'Forge: certified tasks made by deleting a feature from a repository with tests',
    });
    // Each job role reaches only the key families its entry point uses (lib/compute/infra/job-access.ts).
    grantJobAccess(this.rollout.jobRole, data, rolloutJobAccess(settings.jobReadPrefixes), JOB_KEY_REASON);
    grantJobAccess(this.forge.jobRole, data, FORGE_JOB_ACCESS, JOB_KEY_REASON);
    new RunnableTimeoutReport(this, 'RunnableTimeouts', { pools: [this.gpu, this.cpu], alarmTopic: props.alarmTopic });

    new CfnOutput(this, 'GpuJobQueueArn', { value: this.gpu.queue.jobQueueArn, description: 'Fair-share job queue of the GPU pool' });
    new CfnOutput(this, 'CpuJobQueueArn', { value: this.cpu.queue.jobQueueArn, description: 'Fair-share job queue of the CPU pool' });
    new CfnOutput(this, 'RolloutRepositoryUri', { value: this.rollout.repository.repositoryUri, description: 'Push the rollout image here (batch-images/rollout)' });
    new CfnOutput(this, 'ForgeRepositoryUri', { value: this.forge.repository.repositoryUri, description: 'Push the forge image here (batch-images/forge)' });
  }
}
