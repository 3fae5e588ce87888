import { Duration, Size } from 'aws-cdk-lib';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { StageSettings } from '../../config/stages.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import { grantJobAccess } from '../../constructs/job-access.ts';
import { JobImage } from '../../constructs/job-image.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';
import { ROLLOUT_EXIT_CODES } from '../../rollout/rollout-exit-codes.ts';
import { FORGE_JOB_ACCESS } from './forge-job-access.ts';

export interface ForgeJobProps {
  settings: StageSettings;
  data: { blobs: ArtifactsBucket; records: RecordsTable };
  /** The functions' shared variables (the ports' configuration: table, bucket). */
  environment: Record<string, string>;
  logGroup: ILogGroup;
}

/**
 * The forge job on AWS Batch (`batch-images/forge`: forge or recertify a suite): its image and job definition
 * (`JobImage`, CPU-sized), its role granted the forge's key families (`FORGE_JOB_ACCESS`).
 *
 * Created in `scope` itself as `Forge`, the id the Compute stack has always given it, so its logical ids (the ECR
 * repository among them) did not change when it moved here.
 *
 * @example
 * const forge = addForgeJob(this, { settings, data, environment, logGroup: jobLogs });
 * forge.repository.repositoryUri;
 */
export function addForgeJob(scope: Construct, props: ForgeJobProps): JobImage {
  const { settings } = props;
  const forge = new JobImage(scope, 'Forge', {
    settings,
    name: 'forge',
    vcpus: 4,
    memory: Size.gibibytes(8),
    environment: props.environment,
    logGroup: props.logGroup,
    attemptTimeout: Duration.hours(2),
    attempts: 3,
    // The forge exits 0 or 1 (retried); it shares the rollout's "bad input" code so both definitions fail alike.
    badInputExitCode: ROLLOUT_EXIT_CODES.badInput,
    description: 'Forge: certified tasks made by deleting a feature from a repository with tests',
  });
  grantJobAccess(forge.jobRole, props.data, FORGE_JOB_ACCESS);
  return forge;
}
