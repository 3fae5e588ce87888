import type { JobAccess } from '../../constructs/job-access.ts';

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
