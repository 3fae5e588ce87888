import { Duration, Validations } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { COMPUTE_CATEGORIES, type ComputePool } from '../../ports/jobs.ts';
import { batchWeightFactors } from '../batch-weight-factors.ts';
import type { BatchNetwork } from './batch-network.ts';

export interface FairSharePoolProps {
  settings: StageSettings;
  pool: ComputePool;
  network: BatchNetwork;
}

/** Why Batch leaves a job RUNNABLE when no capacity will ever fit it: each gets the queue's time-limit action. */
export const RUNNABLE_TIMEOUT_REASONS = [
  batch.JobStateTimeLimitActionsReason.INSUFFICIENT_INSTANCE_CAPACITY,
  batch.JobStateTimeLimitActionsReason.COMPUTE_ENVIRONMENT_MAX_RESOURCE,
  batch.JobStateTimeLimitActionsReason.JOB_RESOURCE_REQUIREMENT,
] as const;

/**
 * One hardware pool: a managed EC2 compute environment (the stage's instance families, scaling from 0 to `maxvCpus`)
 * and its one fair-share job queue. Fair share balances only inside a queue, so all five compute categories share
 * this queue, as share identifiers of its scheduling policy with the stage's weights (converted to Batch weight
 * factors, which run the other way: `batchWeightFactors`). A job that stays RUNNABLE for one of the reasons no wait
 * will cure (no instance type fits, the environment's max is too small, no capacity in the region) is cancelled after
 * `runnableTimeLimitSeconds` by the queue's time-limit action; `RunnableTimeoutReport` tells people. The instances run
 * the stage's sandboxed jobs only (privileged containers: `JOB_CONTAINER_PRIVILEGED`), so their role is the ECS
 * agent's alone and their metadata service answers IMDSv2 within one hop.
 */
export class FairSharePool extends Construct {
  /** The instances' launch template: IMDSv2 required, hop limit 1. */
  readonly launchTemplate: ec2.LaunchTemplate;
  readonly computeEnvironment: batch.ManagedEc2EcsComputeEnvironment;
  readonly schedulingPolicy: batch.FairshareSchedulingPolicy;
  readonly queue: batch.JobQueue;

  constructor(scope: Construct, id: string, props: FairSharePoolProps) {
    super(scope, id);
    const { settings, pool, network } = props;
    const poolSettings = settings.computePools[pool];
    // IMDSv2 only, and its token answers travel one hop: a process in a container behind a bridge or in a namespace
    // of its own (the sandbox's) gets no token, so no instance role credentials. Batch runs simple EC2 jobs in host
    // network mode, where the job's own process is not a hop away: see JOB_CONTAINER_PRIVILEGED
    // (lib/constructs/job-image.ts).
    this.launchTemplate = new ec2.LaunchTemplate(this, 'LaunchTemplate', {
      requireImdsv2: true,
      httpTokens: ec2.LaunchTemplateHttpTokens.REQUIRED,
      httpPutResponseHopLimit: 1,
      httpEndpoint: true,
      instanceMetadataTags: false,
    });
    this.computeEnvironment = new batch.ManagedEc2EcsComputeEnvironment(this, 'ComputeEnvironment', {
      vpc: network.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [network.jobSecurityGroup],
      ...instanceSelection(poolSettings.instanceTypes),
      useOptimalInstanceClasses: false,
      images: [{ imageType: pool === 'gpu' ? batch.EcsMachineImageType.ECS_AL2023_NVIDIA : batch.EcsMachineImageType.ECS_AL2023 }],
      minvCpus: 0,
      maxvCpus: poolSettings.maxvCpus,
      allocationStrategy: batch.AllocationStrategy.BEST_FIT_PROGRESSIVE,
      updateToLatestImageVersion: true,
      launchTemplate: this.launchTemplate,
    });
    const instanceRole = this.computeEnvironment.node.tryFindChild('InstanceProfileRole');
    if (instanceRole) {
      Validations.of(instanceRole).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role]',
        reason:
          'The ECS container agent on Batch instances registers the instance, reports task state and ships job logs with this AWS-maintained policy (the instance role AWS Batch documents), and the role holds nothing else: no S3, DynamoDB or other data access (jobs use their own, narrower job roles).',
      });
    }
    const factors = batchWeightFactors(settings.computeShares);
    this.schedulingPolicy = new batch.FairshareSchedulingPolicy(this, 'SchedulingPolicy', {
      shareDecay: Duration.seconds(settings.computeShareDecaySeconds),
      shares: COMPUTE_CATEGORIES.map((category) => ({ shareIdentifier: category, weightFactor: factors[category] })),
    });
    this.queue = new batch.JobQueue(this, 'Queue', {
      priority: 1,
      computeEnvironments: [{ computeEnvironment: this.computeEnvironment, order: 1 }],
      schedulingPolicy: this.schedulingPolicy,
      jobStateTimeLimitActions: RUNNABLE_TIMEOUT_REASONS.map((reason) => ({
        action: batch.JobStateTimeLimitActionsAction.CANCEL,
        maxTime: Duration.seconds(settings.runnableTimeLimitSeconds),
        reason,
        state: batch.JobStateTimeLimitActionsState.RUNNABLE,
      })),
    });
  }
}

/** The stage's entries as Batch takes them: a family (`g6e`) as an instance class, a size (`g6e.xlarge`) as a type. */
function instanceSelection(entries: string[]): { instanceClasses: ec2.InstanceClass[]; instanceTypes: ec2.InstanceType[] } {
  const classes = new Set<string>(Object.values(ec2.InstanceClass));
  const instanceClasses: ec2.InstanceClass[] = [];
  const instanceTypes: ec2.InstanceType[] = [];
  for (const entry of entries) {
    if (entry.includes('.')) instanceTypes.push(new ec2.InstanceType(entry));
    else if (classes.has(entry)) instanceClasses.push(entry as ec2.InstanceClass);
    else throw new Error(`computePools: ${entry} is neither an EC2 instance family nor an instance type`);
  }
  return { instanceClasses, instanceTypes };
}
