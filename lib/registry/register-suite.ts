import { isDeepStrictEqual } from 'node:util';
import { ValidationError } from '../errors.ts';
import { loadSuite } from '../harness/eval/load-suite.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from './parse-input.ts';
import { toSuite } from './record-views.ts';
import { registryKeys } from './record-keys.ts';
import { SuiteInput, type Suite, type SuiteInputType } from './schemas.ts';

/** The suite record holds its task ids: their JSON must leave room in a 400 KB DynamoDB item. */
export const SUITE_TASK_IDS_MAX_BYTES = 300_000;

/**
 * Registers a suite version: `SUITE#<id>` holds the current version, its task ids and where the tasks are. A higher
 * version replaces a lower one and starts a new life (status active, `createdAt` now: useful life is per version);
 * the same version again with the same content is an idempotent retry (`created: false`); the same version with
 * other content, or a lower version, is refused.
 *
 * @example
 * await registerSuite(ports, { id: 'forge-py', version: 2, visibility: 'private', owner: 'evals',
 *   tasks: { kind: 'records' }, taskIds: ['t-1', 't-2'] });
 */
export async function registerSuite(ports: Pick<Ports, 'records' | 'now'>, input: unknown): Promise<{ suite: Suite; created: boolean }> {
  const s = parseInput(SuiteInput, input, 'suite');
  const dupes = s.taskIds.filter((t, i) => s.taskIds.indexOf(t) !== i);
  if (dupes.length > 0) throw new ValidationError(`Invalid suite: task ids appear twice: ${[...new Set(dupes)].join(', ')}`, [{ path: 'taskIds', message: 'duplicate ids' }]);
  const listBytes = Buffer.byteLength(JSON.stringify(s.taskIds));
  if (listBytes > SUITE_TASK_IDS_MAX_BYTES) {
    throw new ValidationError(`Invalid suite: its task id list is ${listBytes} bytes; at most ${SUITE_TASK_IDS_MAX_BYTES} fit one record (DynamoDB items are 400 KB): split the suite`, [
      { path: 'taskIds', message: `over ${SUITE_TASK_IDS_MAX_BYTES} bytes` },
    ]);
  }
  const createdAt = ports.now().toISOString();
  const suite: Suite = {
    id: s.id,
    version: s.version,
    visibility: s.visibility,
    status: 'active',
    owner: s.owner,
    ...(s.description ? { description: s.description } : {}),
    tasks: s.tasks,
    taskIds: s.taskIds,
    taskCount: s.taskIds.length,
    ...(s.saturationThreshold !== undefined ? { saturationThreshold: s.saturationThreshold } : {}),
    createdAt,
  };
  const key = registryKeys.suite(s.id);
  const { written } = await ports.records.put(
    { ...key, gsi1pk: registryKeys.allSuites, gsi1sk: s.id, kind: 'suite', ...suite },
    { condition: { kind: 'absentOrOlder', field: 'version', value: s.version } },
  );
  if (written) return { suite, created: true };
  const stored = toSuite((await ports.records.get(key.pk, key.sk))!);
  if (stored.version > s.version) {
    throw new ValidationError(`Invalid suite: ${s.id} is at version ${stored.version}; register a higher version than that`, [{ path: 'version', message: `must be > ${stored.version}` }]);
  }
  const same = (['visibility', 'owner', 'description', 'tasks', 'taskIds', 'saturationThreshold'] as const).every((f) => isDeepStrictEqual(stored[f], suite[f]));
  if (!same) {
    throw new ValidationError(`Invalid suite: ${s.id} version ${s.version} is already registered with other content; bump the version`, [{ path: 'version', message: 'already registered with other content' }]);
  }
  return { suite: stored, created: false };
}

/**
 * Registers a suite from a folder of task files, as `flywheel eval run --suite <dir>` loads it
 * (`lib/harness/eval/load-suite.ts`): every task is validated and its id listed.
 *
 * @example
 * await registerSuiteFromFolder(ports, 'suites/smoke', { id: 'smoke', visibility: 'public', owner: 'evals' });
 */
export async function registerSuiteFromFolder(
  ports: Pick<Ports, 'records' | 'now'>,
  dir: string,
  meta: Omit<SuiteInputType, 'tasks' | 'taskIds'>,
): Promise<{ suite: Suite; created: boolean }> {
  const tasks = await loadSuite(dir);
  return registerSuite(ports, { ...meta, tasks: { kind: 'folder', path: dir }, taskIds: tasks.map((t) => t.task.id) });
}
