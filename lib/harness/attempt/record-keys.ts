/**
 * The record key layout of an eval run, in one place so the harness's writers and every reader (sweeps' aggregate
 * step, the rollout's jobs, bench) agree.
 *
 * | item | pk | sk |
 * | --- | --- | --- |
 * | one attempt | `EVAL#<runId>` | `ATTEMPT#<taskId>#<mode>#<n>` |
 * | the run | `EVAL#<runId>` | `RUN` |
 * | one mode's results | `EVAL#<runId>` | `RESULTS#<mode>` |
 * | a compare-modes report | `EVAL#<runId>` | `COMPARE-MODES` |
 *
 * A sweep's shard writes its child i's attempts under the run id `<shardRunId>.shard-<i>` (`lib/sweeps/record-keys.ts`).
 */
import type { HarnessMode } from '../task/harness-mode.ts';

export function evalPartition(runId: string): string {
  return `EVAL#${runId}`;
}

export function attemptSortKey(taskId: string, mode: HarnessMode, n: number): string {
  return `${ATTEMPT_SORT_PREFIX}${taskId}#${mode}#${n}`;
}

/** Every attempt of a run sorts under this prefix of its partition. */
export const ATTEMPT_SORT_PREFIX = 'ATTEMPT#';

export const evalKeys = {
  attempt: (runId: string, taskId: string, mode: HarnessMode, n: number) => ({ pk: evalPartition(runId), sk: attemptSortKey(taskId, mode, n) }),
  run: (runId: string) => ({ pk: evalPartition(runId), sk: 'RUN' }),
  results: (runId: string, mode: HarnessMode) => ({ pk: evalPartition(runId), sk: `RESULTS#${mode}` }),
  compareModes: (runId: string) => ({ pk: evalPartition(runId), sk: 'COMPARE-MODES' }),
} as const;
