import { Duration, RemovalPolicy, Size, Validations } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import { ROLLOUT_EXIT_CODES } from '../rollout-exit-codes.ts';

export interface JobImageProps {
  settings: StageSettings;
  /** The job definition's name inside the stage (`rollout`, `forge`): `flywheel-<stage>-<name>`. */
  name: string;
  /** The image tag the job definition runs; CI pushes `<repository>:<tag>` (default `latest`). */
  imageTag?: string;
  vcpus: number;
  memory: Size;
  gpus?: number;
  /** Variables every job of the definition gets (the ports' configuration: table, bucket). */
  environment: Record<string, string>;
  logGroup: ILogGroup;
  /** Killed after this long per attempt. */
  attemptTimeout: Duration;
  /** Attempts in all (Batch retries a failed attempt per the exit-code strategy below). */
  attempts: number;
  description: string;
}

/**
 * One job image: an ECR repository the stack owns (images are pushed by CI, so `cdk synth` builds nothing and needs
 * no Docker) and the Batch job definition that runs it.
 *
 * - Privileged: the strict harness builds its sandbox with Linux namespaces, overlay mounts and its own network
 *   namespace (`lib/harness/sandbox/namespace-sandbox.ts`), which an unprivileged ECS container may not do.
 * - Logs go to the given CloudWatch log group (awslogs driver), one stream per job attempt.
 * - Retries follow the rollout job's exit codes (`lib/compute/rollout-exit-codes.ts`): a bad shard spec (exit 3)
 *   exits at once, a host reclaimed or any other failure is retried (`attempts` in all); a job that resumes skips
 *   finished attempts, so a retry only redoes what is left.
 * - The job role may read and write records and blobs (granted by the stack), nothing else.
 */
export class JobImage extends Construct {
  readonly repository: ecr.Repository;
  readonly jobDefinition: batch.EcsJobDefinition;
  readonly jobRole: iam.Role;

  constructor(scope: Construct, id: string, props: JobImageProps) {
    super(scope, id);
    const { settings } = props;
    this.repository = new ecr.Repository(this, 'Repository', {
      imageScanOnPush: true,
      encryption: ecr.RepositoryEncryption.AES_256,
      lifecycleRules: [{ description: 'Keep the 30 newest images', maxImageCount: 30 }],
      removalPolicy: settings.retainData ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
      emptyOnDelete: !settings.retainData,
    });
    this.jobRole = new iam.Role(this, 'JobRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: `Flywheel ${settings.stage} ${props.name} jobs: records and blobs only`,
    });
    this.jobDefinition = new batch.EcsJobDefinition(this, 'JobDefinition', {
      jobDefinitionName: `flywheel-${settings.stage}-${props.name}`,
      container: new batch.EcsEc2ContainerDefinition(this, 'Container', {
        image: ecs.ContainerImage.fromEcrRepository(this.repository, props.imageTag ?? 'latest'),
        cpu: props.vcpus,
        memory: props.memory,
        ...(props.gpus ? { gpu: props.gpus } : {}),
        privileged: true,
        jobRole: this.jobRole,
        environment: { FLYWHEEL_STAGE: settings.stage, ...props.environment },
        logging: ecs.LogDriver.awsLogs({ logGroup: props.logGroup, streamPrefix: props.name }),
      }),
      retryAttempts: props.attempts,
      retryStrategies: [
        batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.custom({ onExitCode: String(ROLLOUT_EXIT_CODES.badInput) })),
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.SPOT_INSTANCE_RECLAIMED),
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.custom({ onReason: '*' })),
      ],
      timeout: props.attemptTimeout,
      propagateTags: true,
    });
    const executionPolicy = this.node.tryFindChild('Container')?.node.tryFindChild('ExecutionRole')?.node.tryFindChild('DefaultPolicy');
    if (executionPolicy) {
      Validations.of(executionPolicy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'ecr:GetAuthorizationToken supports no resource-level permission; pulling layers is granted on this repository only, log writes on the job log group only.',
      });
    }
  }
}
