import { type Duration, Size, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { grantJobAccess } from '../../constructs/job-access.ts';
import { JobImage } from '../../constructs/job-image.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { ROLLOUT_EXIT_CODES } from '../rollout-exit-codes.ts';
import { bedrockModelIds, JUDGE_MODEL_ENV } from '../../modes/modes-models.ts';
import { USER_MODEL_ENV } from '../shard-spec.ts';
import { rolloutJobAccess } from './rollout-job-access.ts';

export interface RolloutJobProps {
  settings: StageSettings;
  data: { blobs: ArtifactsBucket; records: RecordsTable };
  /** The functions' shared variables (the ports' configuration: table, bucket). */
  environment: Record<string, string>;
  logGroup: ILogGroup;
  /** Per attempt and in all: the sweep's Batch task waits for them, so the sweep decides them (`sweep.asl.ts`). */
  attemptTimeout: Duration;
  attempts: number;
}

/**
 * The rollout job on AWS Batch (`batch-images/rollout`, one shard of an eval sweep per job): its image and job
 * definition (`JobImage`, GPU-sized, retries per `ROLLOUT_EXIT_CODES`), its role granted the rollout's key families
 * (`rolloutJobAccess`).
 *
 * Created in `scope` itself as `Rollout`, the id the Compute stack has always given it, so its logical ids (the ECR
 * repository among them) did not change when it moved here.
 *
 * @example
 * const rollout = addRolloutJob(this, { settings, data, environment, logGroup: jobLogs, attemptTimeout, attempts });
 * rollout.jobDefinition.jobDefinitionArn;
 */
export function addRolloutJob(scope: Construct, props: RolloutJobProps): JobImage {
  const { settings } = props;
  const rollout = new JobImage(scope, 'Rollout', {
    settings,
    name: 'rollout',
    vcpus: 8,
    memory: Size.gibibytes(30),
    // The default: the sweep's Batch task overrides it per shard with the checkpoint's `serving.gpus`
    // (SHARD_JOB_RESOURCES in lib/sweeps/workflow/sweep.asl.ts).
    gpus: 1,
    // The judge's and the simulated user's models (stage `sweeps.judgeModel` / `sweeps.userModel`, absent by default):
    // the fallback of a spec that names none.
    environment: {
      ...props.environment,
      ...(settings.sweeps.judgeModel ? { [JUDGE_MODEL_ENV]: settings.sweeps.judgeModel } : {}),
      ...(settings.sweeps.userModel ? { [USER_MODEL_ENV]: settings.sweeps.userModel } : {}),
    },
    logGroup: props.logGroup,
    attemptTimeout: props.attemptTimeout,
    attempts: props.attempts,
    badInputExitCode: ROLLOUT_EXIT_CODES.badInput,
    description: 'One shard of an eval sweep: attempts in the strict harness, the checkpoint served beside them',
  });
  grantJobAccess(rollout.jobRole, props.data, rolloutJobAccess(settings.jobReadPrefixes));
  // InvokeModel only on the Bedrock models those settings name.
  const models = bedrockModelIds(settings.sweeps.judgeModel, settings.sweeps.userModel);
  if (models.length > 0) {
    const stack = Stack.of(scope);
    rollout.jobRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: models.map((id) => stack.formatArn({ service: 'bedrock', account: '', resource: 'foundation-model', resourceName: id })) }),
    );
  }
  return rollout;
}
