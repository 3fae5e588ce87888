/**
 * The record and blob key layout of sweeps, in one place so writers and readers agree (the registry's own items,
 * checkpoints, suites, a suite's best-score points and tasks, are in `lib/registry/record-keys.ts`).
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | result (cell) | `RESULT#<sweepId>` | `CELL#<checkpoint>#<suite>#<mode>` | `RESULTSERIES#<checkpoint>#<suite>#<mode>` / `<updatedAt>#<sweepId>` | `SUITERESULTS#<suite>#<mode>` / `<updatedAt>#<sweepId>#<checkpoint>` |
 * | result (one shard's part) | `RESULT#<sweepId>` | `SHARD#<checkpoint>#<suite>#<mode>#<index>` | | |
 * | sweep | `SWEEP#<id>` | `SWEEP` | `SWEEPS` / `<createdAt>#<id>` | |
 * | execution a start started | `SWEEP#<id>` | `EXECUTION` | | |
 * | comparison with incumbent | `SWEEP#<id>` | `COMPARE#<checkpoint>#<suite>#<mode>` | | |
 * | attempts of a shard's child i | `EVAL#<shardRunId>.shard-<i>` | `ATTEMPT#<task>#<mode>#<n>` (the harness's, `lib/harness/attempt/attempt-record.ts`) | | |
 *
 * gsi1 of a cell row is the time series of one checkpoint × suite × mode across sweeps; gsi2 gives every checkpoint's
 * results on a suite × mode over time (incumbent and saturation read it). Ids never hold `#` (`RegistryId`).
 */
import { createHash } from 'node:crypto';
import type { HarnessMode } from '../harness/task/harness-mode.ts';

/** Sort key, under `SWEEP#<id>`, of the execution a `startSweep` started. */
export const SWEEP_EXECUTION_SK = 'EXECUTION';

export const sweepKeys = {
  resultPartition: (sweepId: string) => `RESULT#${sweepId}`,
  cell: (sweepId: string, checkpoint: string, suite: string, mode: HarnessMode) => ({
    pk: `RESULT#${sweepId}`,
    sk: `CELL#${checkpoint}#${suite}#${mode}`,
  }),
  cellPrefix: 'CELL#',
  shardPart: (sweepId: string, checkpoint: string, suite: string, mode: HarnessMode, index: number) => ({
    pk: `RESULT#${sweepId}`,
    // Zero-padded so parts list in index order.
    sk: `SHARD#${checkpoint}#${suite}#${mode}#${String(index).padStart(5, '0')}`,
  }),
  shardPartPrefix: (checkpoint: string, suite: string, mode: HarnessMode) => `SHARD#${checkpoint}#${suite}#${mode}#`,
  /** Every shard part of a sweep (the report lists the failed ones). */
  allShardPartsPrefix: 'SHARD#',
  resultSeries: (checkpoint: string, suite: string, mode: HarnessMode) => `RESULTSERIES#${checkpoint}#${suite}#${mode}`,
  resultSeriesSort: (updatedAt: string, sweepId: string) => `${updatedAt}#${sweepId}`,
  suiteResults: (suite: string, mode: HarnessMode) => `SUITERESULTS#${suite}#${mode}`,
  suiteResultsSort: (updatedAt: string, sweepId: string, checkpoint: string) => `${updatedAt}#${sweepId}#${checkpoint}`,

  sweep: (id: string) => ({ pk: `SWEEP#${id}`, sk: 'SWEEP' }),
  allSweeps: 'SWEEPS',
  sweepOrder: (createdAt: string, id: string) => `${createdAt}#${id}`,
  execution: (id: string) => ({ pk: `SWEEP#${id}`, sk: SWEEP_EXECUTION_SK }),
  comparison: (sweepId: string, checkpoint: string, suite: string, mode: HarnessMode) => ({
    pk: `SWEEP#${sweepId}`,
    sk: `COMPARE#${checkpoint}#${suite}#${mode}`,
  }),
  comparisonPrefix: 'COMPARE#',

  /**
   * The run id of one shard (the rollout job's `runId`: its child i writes attempts under `<runId>.shard-<i>`).
   * Letters, digits, `.`, `_`, `-` only: other characters of a checkpoint id become `_`, with a short hash of the id
   * so two ids that differ only there stay apart.
   */
  shardRunId: (sweepId: string, checkpoint: string, suite: string, mode: HarnessMode, index: number) =>
    `sweep.${sweepId}.${runIdPart(checkpoint)}.${runIdPart(suite)}.${mode}.${index}`,
} as const;

/** `c0-s1-strict-3` → 3: a shard's index in its cell, the last part of its id (and of its part's sort key). */
export function shardIndexOf(shard: { shardId: string }): number {
  const m = /-(\d+)$/.exec(shard.shardId);
  return m ? Number(m[1]) : 0;
}

/** `coder-7b:step-100` → `coder-7b_step-100-1a2b3c`; a safe id unchanged. */
function runIdPart(id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === id ? id : `${safe}-${createHash('sha256').update(id).digest('hex').slice(0, 6)}`;
}

export const sweepBlobKeys = {
  /** The plan: every shard of the sweep (the Map's items when they are too many to carry in the state). */
  plan: (sweepId: string) => `sweeps/${sweepId}/plan.json`,
  /** One shard's spec, read by the rollout job (`lib/sweeps/shard-spec.ts`). */
  shardSpec: (sweepId: string, shardId: string) => `sweeps/${sweepId}/shards/${shardId}.json`,
  /** A task's JSON copied for the rollout job (tasks from a folder, or records without a task blob). */
  task: (sweepId: string, suite: string, taskId: string) => `sweeps/${sweepId}/tasks/${suite}/${taskId}.json`,
  /** Where the rollout job writes each child's result (`<outputPrefix>/shard-<i>.json`). */
  shardOutputPrefix: (sweepId: string, shardId: string) => `sweeps/${sweepId}/results/${shardId}`,
  /** A cell's per-task tallies when too large for its record (`cell` is `<checkpoint>#<suite>#<mode>`). */
  cellTallies: (sweepId: string, cell: string) => `sweeps/${sweepId}/cells/${encodeURIComponent(cell)}.json`,
  /** The report chart. */
  chart: (sweepId: string) => `sweeps/${sweepId}/report.png`,
} as const;
