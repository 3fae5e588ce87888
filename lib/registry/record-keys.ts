/**
 * The record and blob key layout of the registry and of sweeps, in one place so writers and readers agree.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | checkpoint | `CHECKPOINT#<id>` | `CHECKPOINT` | `CHECKPOINTS` / `<registeredAt>#<id>` | `CHECKPOINTMODEL#<model>` / `<registeredAt>#<id>` |
 * | suite | `SUITE#<id>` | `SUITE` | `SUITES` / `<id>` | |
 * | suite best-score point | `SUITE#<id>` | `BEST#<at>#<sweepId>` | | |
 * | task (forge, imports) | `TASK#<suite>#<taskId>` | `TASK` | | |
 * | result (cell) | `RESULT#<sweepId>` | `CELL#<checkpoint>#<suite>#<mode>` | `RESULTSERIES#<checkpoint>#<suite>#<mode>` / `<updatedAt>#<sweepId>` | `SUITERESULTS#<suite>#<mode>` / `<updatedAt>#<sweepId>#<checkpoint>` |
 * | result (one shard's part) | `RESULT#<sweepId>` | `SHARD#<checkpoint>#<suite>#<mode>#<index>` | | |
 * | sweep | `SWEEP#<id>` | `SWEEP` | `SWEEPS` / `<createdAt>#<id>` | |
 * | comparison with incumbent | `SWEEP#<id>` | `COMPARE#<checkpoint>#<suite>#<mode>` | | |
 * | attempts of a shard's child i | `EVAL#<shardRunId>.shard-<i>` | `ATTEMPT#<task>#<mode>#<n>` (the harness's, `lib/harness/attempt/attempt-record.ts`) | | |
 *
 * gsi1 of a cell row is the time series of one checkpoint × suite × mode across sweeps; gsi2 gives every checkpoint's
 * results on a suite × mode over time (incumbent and saturation read it). Ids never hold `#` (`RegistryId`).
 */
import { createHash } from 'node:crypto';
import type { SweepMode } from './schemas.ts';

export const registryKeys = {
  checkpoint: (id: string) => ({ pk: `CHECKPOINT#${id}`, sk: 'CHECKPOINT' }),
  allCheckpoints: 'CHECKPOINTS',
  checkpointsByModel: (model: string) => `CHECKPOINTMODEL#${model}`,
  checkpointOrder: (registeredAt: string, id: string) => `${registeredAt}#${id}`,

  suite: (id: string) => ({ pk: `SUITE#${id}`, sk: 'SUITE' }),
  allSuites: 'SUITES',
  suiteBestPoint: (suite: string, at: string, sweepId: string) => ({ pk: `SUITE#${suite}`, sk: `BEST#${at}#${sweepId}` }),
  suiteBestPrefix: 'BEST#',

  task: (suite: string, taskId: string, sk = 'TASK') => ({ pk: `TASK#${suite}#${taskId}`, sk }),

  resultPartition: (sweepId: string) => `RESULT#${sweepId}`,
  cell: (sweepId: string, checkpoint: string, suite: string, mode: SweepMode) => ({
    pk: `RESULT#${sweepId}`,
    sk: `CELL#${checkpoint}#${suite}#${mode}`,
  }),
  cellPrefix: 'CELL#',
  shardPart: (sweepId: string, checkpoint: string, suite: string, mode: SweepMode, index: number) => ({
    pk: `RESULT#${sweepId}`,
    // Zero-padded so parts list in index order.
    sk: `SHARD#${checkpoint}#${suite}#${mode}#${String(index).padStart(5, '0')}`,
  }),
  shardPartPrefix: (checkpoint: string, suite: string, mode: SweepMode) => `SHARD#${checkpoint}#${suite}#${mode}#`,
  resultSeries: (checkpoint: string, suite: string, mode: SweepMode) => `RESULTSERIES#${checkpoint}#${suite}#${mode}`,
  resultSeriesSort: (updatedAt: string, sweepId: string) => `${updatedAt}#${sweepId}`,
  suiteResults: (suite: string, mode: SweepMode) => `SUITERESULTS#${suite}#${mode}`,
  suiteResultsSort: (updatedAt: string, sweepId: string, checkpoint: string) => `${updatedAt}#${sweepId}#${checkpoint}`,

  sweep: (id: string) => ({ pk: `SWEEP#${id}`, sk: 'SWEEP' }),
  allSweeps: 'SWEEPS',
  sweepOrder: (createdAt: string, id: string) => `${createdAt}#${id}`,
  comparison: (sweepId: string, checkpoint: string, suite: string, mode: SweepMode) => ({
    pk: `SWEEP#${sweepId}`,
    sk: `COMPARE#${checkpoint}#${suite}#${mode}`,
  }),
  comparisonPrefix: 'COMPARE#',

  /**
   * The run id of one shard (the rollout job's `runId`: its child i writes attempts under `<runId>.shard-<i>`).
   * Letters, digits, `.`, `_`, `-` only: other characters of a checkpoint id become `_`, with a short hash of the id
   * so two ids that differ only there stay apart.
   */
  shardRunId: (sweepId: string, checkpoint: string, suite: string, mode: SweepMode, index: number) =>
    `sweep.${sweepId}.${runIdPart(checkpoint)}.${runIdPart(suite)}.${mode}.${index}`,
} as const;

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
