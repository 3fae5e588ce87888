import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { StageSettings } from '../config/stages.ts';
import { IMAGE_DEFINITION_INFIX } from '../ports/jobs.ts';

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
  /** The exit code by which the job says its input is wrong: no retry will help, so the job fails at once. */
  badInputExitCode: number;
  description: string;
}

/**
 * Whether the rollout and forge containers run privileged: yes, because nothing less lets the sandbox work on Batch.
 *
 * The sandbox (`lib/harness/sandbox/`) gives each attempt a user namespace (root inside mapped to an unprivileged uid
 * outside), pid, mount and network namespaces, an overlayfs workspace, a fresh /proc, a cgroup per attempt and its
 * own seccomp filter. Inside a Docker container that needs
 * - `unshare`/`clone` with namespace flags, `mount`, `pivot_root`: Docker's default seccomp profile allows them only
 *   with CAP_SYS_ADMIN, so the profile must be `unconfined` (or a custom one) or the capability added;
 * - a fresh procfs for the pid namespace: the kernel refuses it while the container's /proc has Docker's masked and
 *   read-only paths over it (`--security-opt systempaths=unconfined` or privileged);
 * - a writable cgroup v2 tree to delegate a cgroup per attempt: non-privileged containers get /sys/fs/cgroup
 *   read-only.
 * An AWS Batch job definition on EC2 offers none of those knobs: its container properties have `privileged` but no
 * capabilities, no `dockerSecurityOptions` (seccomp, apparmor, systempaths) and no cgroup settings; `linuxParameters`
 * holds devices, init process, shared memory, swap and tmpfs only (ECS task definitions have the security options,
 * Batch does not pass them). Bind-mounting the host's cgroup tree writable would hand the container the host's
 * cgroups, no better than privileged. So the container runs privileged, and what that exposes is contained:
 *
 * - The sandbox, not the container, is the boundary for task code: it drops every capability, applies its own
 *   seccomp filter and has no network route but the harness's egress proxy, so no route of its own to the instance
 *   metadata service (169.254.169.254) or the ECS credential endpoint (169.254.170.2). The proxy connects from the
 *   host's network on the task's behalf: it must refuse those link-local addresses whatever a host name resolves
 *   to (`lib/harness/sandbox/egress-proxy.ts`).
 * - The instances run only these jobs: the GPU pool's compute environment runs the rollout definition, the CPU
 *   pool's the forge (the stage defines no other job definitions; a trusted job such as a trainer must get its own
 *   compute environment, not these).
 * - The instance role carries only the ECS agent's AWS-managed policy (`FairSharePool`); S3 and DynamoDB are reached
 *   with the job role, which reaches only the job's key families (`job-access.ts`).
 * - IMDSv2 only, hop limit 1 (`FairSharePool`'s launch template): the metadata service answers no container behind a
 *   bridge or namespace hop.
 *
 * Not mitigated: Batch runs simple EC2 jobs in the host network mode, so a process that escapes the sandbox into the
 * privileged container is root on the instance, with the host's network: it can reach the metadata service (the
 * instance role: ECS agent actions only) and the job role credentials of every job on that instance, and tamper with
 * other jobs placed on it. The sandbox is the layer that must hold.
 */
export const JOB_CONTAINER_PRIVILEGED = true;

/**
 * One sandboxed job image: an ECR repository the stack owns (images are pushed by CI, so `cdk synth` builds nothing
 * and needs no Docker) and the Batch job definition that runs it; the rollout job (`lib/rollout/infra/rollout-job.ts`)
 * and the forge job (`lib/forge/infra/forge-job.ts`) are built with it.
 *
 * - Privileged, and why it stays (`JOB_CONTAINER_PRIVILEGED`, below).
 * - Logs go to the given CloudWatch log group (awslogs driver), one stream per job attempt.
 * - Retries: the job's bad-input exit code (`badInputExitCode`: the rollout's bad shard spec, exit 3, see
 *   `lib/rollout/rollout-exit-codes.ts`) fails at once, a host reclaimed or any other failure is retried (`attempts`
 *   in all); a rollout that resumes skips finished attempts, so a retry only redoes what is left.
 * - The job role gets only what the stack grants it: its key families of blobs and records (`job-access.ts`).
 */
export class JobImage extends Construct {
  readonly repository: ecr.Repository;
  readonly jobDefinition: batch.EcsJobDefinition;
  readonly jobRole: iam.Role;
  /** The role ECS pulls the image and writes the logs with (CDK's, on the container). */
  readonly executionRole: iam.IRole;
  /** The job definition's name, `flywheel-<stage>-<name>`. */
  readonly jobDefinitionName: string;
  /**
   * Every revision of every clone of this definition per environment image (`<name>-env-<16 hex>`, what
   * `BatchImageDefinitions` registers): `job-definition/flywheel-<stage>-<name>-env-*`.
   */
  readonly imageDefinitionArns: string;

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
      description: `Flywheel ${settings.stage} ${props.name} jobs: their own blob and record key families only`,
    });
    this.jobDefinitionName = `flywheel-${settings.stage}-${props.name}`;
    this.imageDefinitionArns = Stack.of(this).formatArn({ service: 'batch', resource: 'job-definition', resourceName: `${this.jobDefinitionName}${IMAGE_DEFINITION_INFIX}*` });
    const container = new batch.EcsEc2ContainerDefinition(this, 'Container', {
      image: ecs.ContainerImage.fromEcrRepository(this.repository, props.imageTag ?? 'latest'),
      cpu: props.vcpus,
      memory: props.memory,
      ...(props.gpus ? { gpu: props.gpus } : {}),
      // Why, and how it is contained: JOB_CONTAINER_PRIVILEGED.
      privileged: JOB_CONTAINER_PRIVILEGED,
      jobRole: this.jobRole,
      environment: { FLYWHEEL_STAGE: settings.stage, ...props.environment },
      logging: ecs.LogDriver.awsLogs({ logGroup: props.logGroup, streamPrefix: props.name }),
    });
    this.executionRole = container.executionRole;
    this.jobDefinition = new batch.EcsJobDefinition(this, 'JobDefinition', {
      jobDefinitionName: this.jobDefinitionName,
      container,
      retryAttempts: props.attempts,
      retryStrategies: [
        batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.custom({ onExitCode: String(props.badInputExitCode) })),
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.SPOT_INSTANCE_RECLAIMED),
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.custom({ onReason: '*' })),
      ],
      timeout: props.attemptTimeout,
      propagateTags: true,
    });
    const executionPolicy = container.node.tryFindChild('ExecutionRole')?.node.tryFindChild('DefaultPolicy');
    if (executionPolicy) {
      Validations.of(executionPolicy).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'ecr:GetAuthorizationToken supports no resource-level permission; pulling layers is granted on this repository only, log writes on the job log group only.',
      });
    }
  }

  /**
   * Lets `grantee` register this definition's clones per environment image (`BatchImageDefinitions`: the sweep's
   * plan-shards step); `imageDefinitionArns` is the resource that needs an IAM5 reason where the grantee's policy is:
   * - batch:RegisterJobDefinition on `<definition>-env-*` only, and batch:TagResource there only while registering
   *   (`batch:CreateAction`), since a clone is registered with its tags;
   * - batch:DescribeJobDefinitions, which takes no resource-level permission (`*`);
   * - iam:PassRole on exactly this definition's job and execution roles, to Batch only: a clone runs with the roles
   *   of the definition it copies, no others.
   */
  grantRegisterImageDefinitions(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:RegisterJobDefinition'], resources: [this.imageDefinitionArns] }));
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['batch:TagResource'], resources: [this.imageDefinitionArns], conditions: { StringEquals: { 'batch:CreateAction': 'RegisterJobDefinition' } } }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['batch:DescribeJobDefinitions'], resources: ['*'] }));
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.jobRole.roleArn, this.executionRole.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'batch.amazonaws.com' } },
      }),
    );
  }
}
