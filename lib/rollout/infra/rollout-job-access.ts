import { ConfigurationError } from '../../errors.ts';
import type { JobAccess } from '../../constructs/job-access.ts';

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
      throw new ConfigurationError(`jobReadPrefixes: "${prefix}" is not a key prefix like "checkpoints/" (letters, digits, . _ -, ending in /, no wildcard)`);
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
