/**
 * Where the forge keeps what it makes, in the single table and in blobs:
 *
 * | item | pk | sk | gsi1 |
 * | --- | --- | --- | --- |
 * | forged task | `TASK#<suite>#<id>` (the registry's task key) | `TASK` | `SUITE#<suite>` / `TASK#<id>` |
 * | forge run | `FORGERUN#<runId>` | `RUN` | `FORGERUNS` / `<startedAt>#<runId>` |
 * | baseline | `FORGERUN#<runId>` | `BASELINE` | |
 * | candidate tried | `FORGERUN#<runId>` | `CANDIDATE#<candidateId>` | |
 *
 * Blobs: `forge/suites/<suite>/tasks/<id>/{task.json,removal.patch,reference.patch,certify.log,repo.tar.gz}` and
 * `forge/runs/<runId>/…` (baseline and candidate logs). Records hold the keys, never the bodies.
 */
import { registryKeys } from '../registry/record-keys.ts';

export const TASK_SK = 'TASK';
export const taskPk = (suite: string, id: string) => registryKeys.task(suite, id, TASK_SK).pk;
export const suiteIndexPk = (suite: string) => `SUITE#${suite}`;
export const taskIndexSk = (id: string) => `TASK#${id}`;
export const TASK_INDEX_PREFIX = 'TASK#';

export const FORGE_RUN_PREFIX = 'FORGERUN#';
export const forgeRunPk = (runId: string) => `${FORGE_RUN_PREFIX}${runId}`;
export const FORGE_RUN_SK = 'RUN';
export const ALL_FORGE_RUNS = 'FORGERUNS';
export const forgeRunOrder = (startedAt: string, runId: string) => `${startedAt}#${runId}`;
export const BASELINE_SK = 'BASELINE';
export const CANDIDATE_PREFIX = 'CANDIDATE#';
export const candidateSk = (candidateId: string) => `${CANDIDATE_PREFIX}${candidateId}`;

export const taskBlobPrefix = (suite: string, id: string) => `forge/suites/${suite}/tasks/${id}`;
