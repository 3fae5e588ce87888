import { Duration, Size, Validations } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import type * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { grantJobAccess, type JobAccess } from '../../constructs/job-access.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';

/** The trainer's exit code for input it cannot train on (`flywheel_trainer policy-job`): no retry helps. */
export const POLICY_TRAINER_BAD_INPUT_EXIT_CODE = 2;
/** Attempts in all: a reclaimed host or a crash is retried, and the trainer resumes from its last saved state. */
export const POLICY_TRAINER_JOB_ATTEMPTS = 3;
/** Per attempt: a long run saves its state every `saveEvery` steps, so a timed-out attempt loses little when retried. */
export const POLICY_TRAINER_ATTEMPT_TIMEOUT_SECONDS = 24 * 3600;
/** Nodes of the multi-node parallel definition by default; a run's `trainer.nodes` overrides it at submit time. */
export const MULTI_NODE_DEFAULT_NODES = 2;
/** The multi-node definition's one node range: from node 0, open-ended, so any `NumNodes` override fits it. */
export const MULTI_NODE_TARGET_NODES = '0:';

/**
 * The policy trainer's role: reads the training data (datasets, staged base checkpoints under `training/` and
 * `checkpoints/`) and writes only under `training/runs/` (its metrics, resumable state and checkpoint). No records:
 * the workflow's step function records the run. Residual scope: a job may write the files of any run; a run's
 * checkpoint is swept and compared before anyone proposes it.
 */
export const POLICY_TRAINER_JOB_ACCESS: JobAccess = {
  blobs: { read: ['training/*', 'checkpoints/*'], write: ['training/runs/*'], denyWrite: [] },
  records: { read: [], write: [] },
};

export interface PolicyTrainerJobProps {
  settings: StageSettings;
  /** The trainer image's repository (`batch-images/trainer`: the one the judge derivation's trainer runs too). */
  repository: ecr.IRepository;
  imageTag?: string;
  blobs: ArtifactsBucket;
  records: RecordsTable;
  logGroup: ILogGroup;
  /** Variables every job gets (the bucket). */
  environment: Record<string, string>;
}

/**
 * The policy trainer on the GPU pool (`python -m flywheel_trainer policy-job`, its environment `TRAINER_JOB_ENV`):
 * - `single`: one container with every GPU of a node (`trainer.gpus`; torchrun's processes under FSDP2 inside it);
 * - `multiNode`: an AWS Batch multi-node parallel definition for `trainer.nodes` > 1: the same container on each node
 *   (node 0 the main one; Batch gives every node the main node's address, `AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS`,
 *   for torchrun's rendezvous), with the node count overridden at submit time.
 *
 * The trainer runs trusted code on data (no sandbox), so its container is not privileged, unlike the rollout's; its
 * role reaches the training blobs only (`POLICY_TRAINER_JOB_ACCESS`). Bad input (exit 2) fails at once; anything else
 * is retried and resumes from the last saved state.
 */
export class PolicyTrainerJob extends Construct {
  readonly single: batch.EcsJobDefinition;
  readonly multiNode: batch.MultiNodeJobDefinition;
  readonly jobRole: iam.Role;
  /** The trainer image both definitions run (repository URI and tag), for the checkpoints' lineage. */
  readonly image: string;

  constructor(scope: Construct, id: string, props: PolicyTrainerJobProps) {
    super(scope, id);
    const { settings } = props;
    this.image = props.repository.repositoryUriForTag(props.imageTag ?? 'latest');
    this.jobRole = new iam.Role(this, 'JobRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: `Flywheel ${settings.stage} policy trainer jobs: the training blobs only`,
    });
    grantJobAccess(this.jobRole, { blobs: props.blobs, records: props.records }, POLICY_TRAINER_JOB_ACCESS);
    const container = (cid: string) =>
      new batch.EcsEc2ContainerDefinition(this, cid, {
        image: ecs.ContainerImage.fromEcrRepository(props.repository, props.imageTag ?? 'latest'),
        command: ['python', '-m', 'flywheel_trainer', 'policy-job'],
        // Fits the smallest GPU instance of the pool (g6.xlarge: 4 vCPUs, 16 GiB); a run asks for its GPUs, vCPUs and
        // memory at submit (prepare-train's `resources` → ContainerOverrides.ResourceRequirements).
        cpu: 4,
        memory: Size.gibibytes(14),
        gpu: 1,
        privileged: false,
        jobRole: this.jobRole,
        environment: { FLYWHEEL_STAGE: settings.stage, ...props.environment },
        logging: ecs.LogDriver.awsLogs({ logGroup: props.logGroup, streamPrefix: 'policy-trainer' }),
        // torch's data loaders and NCCL share memory between processes.
        linuxParameters: new batch.LinuxParameters(this, `${cid}Linux`, { sharedMemorySize: Size.gibibytes(8) }),
      });
    const retryStrategies = [
      batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.custom({ onExitCode: String(POLICY_TRAINER_BAD_INPUT_EXIT_CODE) })),
      batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.SPOT_INSTANCE_RECLAIMED),
      batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.custom({ onReason: '*' })),
    ];
    const single = container('Container');
    this.single = new batch.EcsJobDefinition(this, 'JobDefinition', {
      jobDefinitionName: `flywheel-${settings.stage}-policy-trainer`,
      container: single,
      retryAttempts: POLICY_TRAINER_JOB_ATTEMPTS,
      retryStrategies,
      timeout: Duration.seconds(POLICY_TRAINER_ATTEMPT_TIMEOUT_SECONDS),
      propagateTags: true,
    });
    const node = container('NodeContainer');
    this.multiNode = new batch.MultiNodeJobDefinition(this, 'MultiNodeJobDefinition', {
      jobDefinitionName: `flywheel-${settings.stage}-policy-trainer-multinode`,
      containers: [{ startNode: 0, endNode: MULTI_NODE_DEFAULT_NODES - 1, container: node }],
      mainNode: 0,
      retryAttempts: POLICY_TRAINER_JOB_ATTEMPTS,
      retryStrategies,
      timeout: Duration.seconds(POLICY_TRAINER_ATTEMPT_TIMEOUT_SECONDS),
      propagateTags: true,
    });
    // An open node range (`0:`), which the construct cannot write: a closed one (`0:1`) makes Batch refuse every
    // `NumNodes` override but the default, so `trainer.nodes` could not choose the node count at submit time.
    (this.multiNode.node.defaultChild as batch.CfnJobDefinition).addPropertyOverride('NodeProperties.NodeRangeProperties.0.TargetNodes', `${MULTI_NODE_TARGET_NODES}`);
    for (const c of [single, node]) {
      const executionPolicy = c.node.tryFindChild('ExecutionRole')?.node.tryFindChild('DefaultPolicy');
      if (executionPolicy) {
        Validations.of(executionPolicy).acknowledge({
          id: 'AwsSolutions-IAM5[Resource::*]',
          reason: 'ecr:GetAuthorizationToken supports no resource-level permission; pulling layers is granted on the trainer repository only, log writes on the job log group only.',
        });
      }
    }
  }
}
