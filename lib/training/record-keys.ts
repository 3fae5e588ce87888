/**
 * The record key layout of the training capability.
 *
 * | item | pk | sk | gsi1 | gsi2 |
 * | --- | --- | --- | --- | --- |
 * | training run | `TRAINRUN#<runId>` | `RUN` | `TRAINRUNS` / `<createdAt>#<runId>` | `TRAINRUNS#<status>` / `<createdAt>#<runId>` |
 * | decision record | `DECISIONS#<attemptId>` | `DEC#<decisionId>` | `DECISIONS` / `<createdAt>#<decisionId>` | `DECISIONRUN#<runId>` (no run: `DECISIONFEEDBACK`) / `<createdAt>#<decisionId>` |
 * | decision lookup (id → attempt) | `DECISION#<decisionId>` | `DECISION` | | |
 *
 * Blob keys of a run's files are `trainingRunKeys(runId)` of `schemas.ts` (`training/runs/<runId>/…`).
 */

/** Training runs: by id, all newest first (gsi1), and by status newest first (gsi2: the stall check reads `training`). */
export const trainingRunRecordKeys = {
  run: (runId: string) => ({ pk: `TRAINRUN#${runId}`, sk: 'RUN' }),
  all: 'TRAINRUNS',
  byStatus: (status: string) => `TRAINRUNS#${status}`,
  order: (createdAt: string, runId: string) => `${createdAt}#${runId}`,
};

/**
 * Decision records: all of one attempt in one partition (what the dataset builder reads per attempt), newest first
 * over all (gsi1) and per eval run (gsi2; a feedback trajectory's, under `DECISIONFEEDBACK`), and a small lookup
 * item that finds a record's attempt from its id alone.
 */
export const decisionRecordKeys = {
  decision: (attemptId: string, decisionId: string) => ({ pk: `DECISIONS#${attemptId}`, sk: `DEC#${decisionId}` }),
  attempt: (attemptId: string) => `DECISIONS#${attemptId}`,
  sortPrefix: 'DEC#',
  all: 'DECISIONS',
  /** A run's partition; feedback trajectories (no run) are under `DECISIONFEEDBACK`, which no run id can produce. */
  byRun: (runId: string | undefined) => (runId === undefined ? 'DECISIONFEEDBACK' : `DECISIONRUN#${runId}`),
  order: (createdAt: string, decisionId: string) => `${createdAt}#${decisionId}`,
  lookup: (decisionId: string) => ({ pk: `DECISION#${decisionId}`, sk: 'DECISION' }),
};
