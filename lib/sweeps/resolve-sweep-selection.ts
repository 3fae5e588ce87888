import type { SweepSettings } from '../config/stages.ts';
import { ValidationError } from '../errors.ts';
import type { FieldIssue } from '../shared/field-issues.ts';
import type { RecordsPort } from '../ports/records.ts';
import { findCheckpoint } from '../registry/get-checkpoint.ts';
import { findSuite } from '../registry/get-suite.ts';
import { listAllSuites } from '../registry/list-suites.ts';
import { toCheckpoint } from '../registry/record-views.ts';
import { registryKeys } from '../registry/record-keys.ts';
import type { Checkpoint, Suite } from '../registry/schemas.ts';
import { HARNESS_MODES, type HarnessMode } from '../harness/task/harness-mode.ts';
import type { MAX_SWEEP_SHARDS as MaxShards } from './workflow/sweep-steps.ts';

/** Bound of one sweep's shard count (`MAX_SWEEP_SHARDS` of the workflow contract: a plan fits one state). */
export const SWEEP_SHARD_LIMIT: typeof MaxShards = 1000;

export interface SweepSelectionRequest {
  checkpoints?: string[];
  suites?: string[];
  modes?: HarnessMode[];
  attemptsPerTask?: number;
}

export interface SweepSelection {
  checkpoints: Checkpoint[];
  suites: Suite[];
  modes: HarnessMode[];
  attemptsPerTask: number;
  /** Shards the plan will have. */
  shardCount: number;
}

/** The newest active checkpoint of each model (index gsi1 `CHECKPOINTS`, newest first). */
export async function newestCheckpointPerModel(records: RecordsPort): Promise<Checkpoint[]> {
  const newest = new Map<string, Checkpoint>();
  let cursor: string | undefined;
  do {
    const page = await records.query({ index: 'gsi1', partition: registryKeys.allCheckpoints, descending: true, limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const c of page.items.map(toCheckpoint)) if (c.status === 'active' && !newest.has(c.model)) newest.set(c.model, c);
    cursor = page.cursor;
  } while (cursor);
  return [...newest.values()].sort((a, b) => a.id.localeCompare(b.id));
}

/** Shards of one cell: ⌈tasks / shardMaxTasks⌉. */
export function shardsPerCell(taskCount: number, settings: Pick<SweepSettings, 'shardMaxTasks'>): number {
  return Math.max(1, Math.ceil(taskCount / settings.shardMaxTasks));
}

/**
 * Resolves what a sweep runs and checks it, collecting every problem before throwing one `Flywheel.ValidationError`
 * that names each: unknown or retired checkpoints, unknown or retired suites, nothing selected, too many shards.
 * Read-only: `POST /v1/sweeps` calls it to answer 400 at once, validate-sweep calls it and then records the result.
 *
 * @example
 * const sel = await resolveSweepSelection(ports.records, { suites: ['smoke'] }, settings); // newest checkpoints
 */
export async function resolveSweepSelection(records: RecordsPort, request: SweepSelectionRequest, settings: SweepSettings): Promise<SweepSelection> {
  const issues: FieldIssue[] = [];
  let checkpoints: Checkpoint[] = [];
  if (request.checkpoints) {
    for (const [i, id] of request.checkpoints.entries()) {
      const c = await findCheckpoint(records, id);
      if (!c) issues.push({ path: `checkpoints[${i}]`, message: `no checkpoint ${id} is registered` });
      else if (c.status === 'retired') issues.push({ path: `checkpoints[${i}]`, message: `checkpoint ${id} is retired` });
      else if (!checkpoints.some((x) => x.id === c.id)) checkpoints.push(c);
    }
  } else {
    checkpoints = await newestCheckpointPerModel(records);
    if (checkpoints.length === 0) issues.push({ path: 'checkpoints', message: 'none given and no active checkpoint is registered' });
  }
  let suites: Suite[] = [];
  if (request.suites) {
    for (const [i, id] of request.suites.entries()) {
      const s = await findSuite(records, id);
      if (!s) issues.push({ path: `suites[${i}]`, message: `no suite ${id} is registered` });
      else if (s.status === 'retired') issues.push({ path: `suites[${i}]`, message: `suite ${id} is retired` });
      else if (!suites.some((x) => x.id === s.id)) suites.push(s);
    }
  } else {
    suites = (await listAllSuites({ records })).filter((s) => s.status === 'active');
    if (suites.length === 0) issues.push({ path: 'suites', message: 'none given and no suite is active' });
  }
  const modes = request.modes ? [...new Set(request.modes)] : [...HARNESS_MODES];
  for (const [i, m] of modes.entries()) if (!HARNESS_MODES.includes(m)) issues.push({ path: `modes[${i}]`, message: `unknown mode ${String(m)}: strict or lenient` });
  const attemptsPerTask = request.attemptsPerTask ?? settings.attemptsPerTask;
  if (!Number.isInteger(attemptsPerTask) || attemptsPerTask < 1 || attemptsPerTask > 100) {
    issues.push({ path: 'attemptsPerTask', message: 'an integer from 1 to 100' });
  }
  const shardCount = checkpoints.length * modes.length * suites.reduce((a, s) => a + shardsPerCell(s.taskIds.length, settings), 0);
  if (issues.length === 0 && shardCount > SWEEP_SHARD_LIMIT) {
    issues.push({ path: 'suites', message: `the sweep would have ${shardCount} shards; at most ${SWEEP_SHARD_LIMIT}: split it into several sweeps` });
  }
  if (issues.length > 0) throw new ValidationError(`Invalid sweep: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  return { checkpoints, suites, modes, attemptsPerTask, shardCount };
}
