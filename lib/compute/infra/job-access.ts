import type * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { FlywheelError } from '../../errors.ts';
import type { ArtifactsBucket } from '../../constructs/artifacts-bucket.ts';
import type { RecordsTable } from '../../constructs/records-table.ts';

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

/**
 * The rollout job (`batch-images/rollout/entrypoint.ts`, `runRolloutShard`), from the keys its code uses:
 *
 * - reads its shard spec and the tasks it names: `sweeps/<sweep>/shards/…`, `sweeps/<sweep>/tasks/…` (a sweep's
 *   copies), `evals/<run>/shard-spec.json` (`flywheel eval run --jobs`), forged tasks and their repository tarballs
 *   `forge/suites/<suite>/tasks/<id>/…`, and checkpoint weights and suites' task files under the stage's
 *   `jobReadPrefixes`;
 * - writes each child's result `<outputPrefix>/shard-<i>.json` (`sweeps/<sweep>/results/…` or `evals/<run>/…`), the
 *   attempts' diffs `evals/<run>.shard-<i>/diffs/…`, trajectories `trajectories/attempts/<attempt>.jsonl` and grading
 *   logs `grading/<attempt>/test.log`; never a spec, a plan or a task copy (explicit deny);
 * - records: reads and writes its attempts `EVAL#<run>.shard-<i>` (a retried job resumes from them) and writes its
 *   shard summary `ROLLOUT#<run>`.
 *
 * Residual scope: the run id is known only when the sweep submits the job, and a Batch job role takes no session
 * tags or per-job session policy (ECS hands every job of the definition the same role credentials), so the patterns
 * stop at the key family, not the run: a job can read any sweep's specs and tasks and write any run's attempts,
 * trajectories and results, where the run id is part of every key it writes. It cannot touch feedback, the raw
 * archive, failure modes, the registry (checkpoints, suites, sweeps, results) or delete anything; overwritten
 * objects keep their earlier versions (the bucket is versioned).
 *
 * Tenants: jobs run over the root ports (the default tenant's un-prefixed keys; `scopePortsToTenant` withholds the
 * jobs port from other tenants). When jobs carry a tenant, their keys gain `tenants/<t>/` and `T#<t>#`, and these
 * patterns must follow (they deny such keys today, by design).
 */
export function rolloutJobAccess(readPrefixes: readonly string[]): JobAccess {
  for (const prefix of readPrefixes) {
    // `raw/` + `*`, never `*` alone or a bare word (`check` would cover `checkout/…` too).
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9._-]+)*\/$/.test(prefix)) {
      throw new FlywheelError('ConfigurationError', `jobReadPrefixes: "${prefix}" is not a key prefix like "checkpoints/" (letters, digits, . _ -, ending in /, no wildcard)`);
    }
  }
  return {
    blobs: {
      read: ['sweeps/*', 'evals/*', 'forge/suites/*', ...readPrefixes.map((p) => `${p}*`)],
      write: ['sweeps/*/results/*', 'evals/*/shard-*.json', 'evals/*/diffs/*', 'trajectories/attempts/*', 'grading/*'],
      denyWrite: ['sweeps/*/shards/*', 'sweeps/*/tasks/*', 'sweeps/*/plan.json', 'evals/*/shard-spec.json'],
    },
    records: { read: ['EVAL#*'], write: ['EVAL#*', 'ROLLOUT#*'] },
  };
}

/**
 * The forge job (`batch-images/forge/entrypoint.ts`, `forgeRepository`, `recertifySuite`):
 *
 * - blobs under `forge/`: reads its spec (`FLYWHEEL_FORGE_SPEC_KEY`, which must lie under `forge/`) and forged tasks
 *   with their repository tarballs (recertify); writes forged tasks `forge/suites/<suite>/tasks/<id>/…` and run logs
 *   and results `forge/runs/<run>/…`;
 * - records: forged tasks `TASK#<suite>#<id>` (put, read, recertified in place) and forge runs `FORGERUN#<run>`
 *   (the run and its candidates); queries gsi1 for a suite's tasks (`SUITE#<suite>`) and the run list (`FORGERUNS`).
 *
 * Residual scope: the suite and run come with the job, so a forge job can write any suite's forged tasks (tasks of
 * imported suites are `TASK#` records too) and any forge run; it cannot touch sweeps, evals, feedback or the
 * registry's checkpoints, suites and results, or delete anything.
 */
export const FORGE_JOB_ACCESS: JobAccess = {
  blobs: { read: ['forge/*'], write: ['forge/suites/*', 'forge/runs/*'], denyWrite: [] },
  records: { read: ['TASK#*', 'FORGERUN#*'], write: ['TASK#*', 'FORGERUN#*'], indexQueries: { gsi1: ['SUITE#*', 'FORGERUNS'] } },
};

/** Grants `access` on the stage's bucket and table to a job role; cdk-nag's wildcard findings get `reason`. */
export function grantJobAccess(role: iam.IRole & Construct, data: { blobs: ArtifactsBucket; records: RecordsTable }, access: JobAccess, reason: string): void {
  data.blobs.grantObjectPatterns(role, { ...access.blobs, reason });
  data.records.grantPartitions(role, access.records);
}
