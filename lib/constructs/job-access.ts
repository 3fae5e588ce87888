import type * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { ArtifactsBucket } from './artifacts-bucket.ts';
import type { RecordsTable } from './records-table.ts';

/**
 * What one Batch job's role may touch: blob key patterns (IAM wildcards, `*` spans `/`) and record partition-key
 * patterns (`dynamodb:LeadingKeys`). Reads are GetObject / GetItem and Query; writes are PutObject / PutItem only:
 * no job deletes an object or an item, and none updates or batch-writes.
 */
export interface JobAccess {
  blobs: {
    read: readonly string[];
    write: readonly string[];
    /** Keys a `write` pattern covers that the job must never write (what it is told to run). */
    denyWrite: readonly string[];
  };
  records: {
    read: readonly string[];
    write: readonly string[];
    indexQueries?: { gsi1?: readonly string[]; gsi2?: readonly string[] };
  };
}

/** Why a job role's object patterns stop at the key family (cdk-nag's IAM5 wildcard findings). */
const JOB_KEY_REASON =
  'Job blob keys hold the run id, known only when the job is submitted (a job role takes no per-job session policy): objects are granted per key family of this one bucket (specs, tasks, results, trajectories), never the whole bucket or another bucket.';

/** Grants `access` on the stage's bucket and table to a job role; cdk-nag's wildcard findings get `JOB_KEY_REASON`. */
export function grantJobAccess(role: iam.IRole & Construct, data: { blobs: ArtifactsBucket; records: RecordsTable }, access: JobAccess): void {
  data.blobs.grantObjectPatterns(role, { ...access.blobs, reason: JOB_KEY_REASON });
  data.records.grantPartitions(role, access.records);
}
