import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, ValidationError } from '../errors.ts';
import { loadSuite } from '../harness/eval/load-suite.ts';
import type { Ports } from '../ports/ports.ts';
import { parseInput } from '../shared/parse-input.ts';
import { findSuite } from './get-suite.ts';
import { suiteRecord } from './record-codecs.ts';
import { SuiteInput, type Suite, type SuiteInputType } from './schemas.ts';

/** The suite record holds its task ids: their JSON must leave room in a 400 KB DynamoDB item. */
export const SUITE_TASK_IDS_MAX_BYTES = 300_000;

/** Fields whose change makes a new version (a version's content is immutable: results name it). */
const CONTENT_FIELDS = ['visibility', 'owner', 'description', 'tasks', 'taskIds', 'saturationThreshold'] as const;

/** Tries of an omitted-version registration that lost a race to a concurrent one (each re-reads the stored version). */
const AUTO_VERSION_TRIES = 3;

/**
 * Registers a suite version: `SUITE#<id>` holds the current version, its task ids and where the tasks are. A higher
 * version replaces a lower one and starts a new life (status active, `createdAt` now: useful life is per version);
 * the same version again with the same content is an idempotent retry (`created: false`); the same version with
 * other content, or a lower version, is refused. Without a version: 1 for a new id, the stored one when nothing
 * changed, the next one when anything changed (so `POST /v1/suites` with edited task ids bumps the version).
 *
 * @example
 * await registerSuite(ports, { id: 'forge-py', version: 2, visibility: 'private', owner: 'evals',
 *   tasks: { kind: 'records' }, taskIds: ['t-1', 't-2'] });
 */
export async function registerSuite(
  ports: Pick<Ports, 'records' | 'now'>,
  input: unknown,
): Promise<{ suite: Suite; created: boolean; previousVersion?: number }> {
  const s = parseInput(SuiteInput, input, 'suite');
  const dupes = s.taskIds.filter((t, i) => s.taskIds.indexOf(t) !== i);
  if (dupes.length > 0) throw new ValidationError(`Invalid suite: task ids appear twice: ${[...new Set(dupes)].join(', ')}`, [{ path: 'taskIds', message: 'duplicate ids' }]);
  const listBytes = Buffer.byteLength(JSON.stringify(s.taskIds));
  if (listBytes > SUITE_TASK_IDS_MAX_BYTES) {
    throw new ValidationError(`Invalid suite: its task id list is ${listBytes} bytes; at most ${SUITE_TASK_IDS_MAX_BYTES} fit one record (DynamoDB items are 400 KB): split the suite`, [
      { path: 'taskIds', message: `over ${SUITE_TASK_IDS_MAX_BYTES} bytes` },
    ]);
  }
  if (s.tasks.kind === 'folder' && !isAbsolute(s.tasks.path)) {
    throw new ValidationError(`Invalid suite: tasks.path ${s.tasks.path} is relative; a folder suite names an absolute folder`, [{ path: 'tasks.path', message: 'not absolute' }]);
  }
  if (s.tasks.kind === 'folder' && !existsSync(s.tasks.path)) {
    // On AWS the API runs in a Lambda, where no folder of the person registering exists.
    throw new ValidationError(
      `Invalid suite: no folder ${s.tasks.path} on the machine that serves this API; a folder suite is for the local runtime (on AWS put the tasks in blobs: tasks.kind blobs)`,
      [{ path: 'tasks.path', message: 'no such folder here' }],
    );
  }
  for (let attempt = 1; ; attempt++) {
    const before = await findSuite(ports.records, s.id);
    const content: Omit<Suite, 'version' | 'status' | 'createdAt'> = {
      id: s.id,
      visibility: s.visibility,
      owner: s.owner,
      ...(s.description ? { description: s.description } : {}),
      tasks: s.tasks,
      taskIds: s.taskIds,
      taskCount: s.taskIds.length,
      ...(s.saturationThreshold !== undefined ? { saturationThreshold: s.saturationThreshold } : {}),
    };
    const unchanged = before !== undefined && CONTENT_FIELDS.every((f) => isDeepStrictEqual(before[f], content[f]));
    if (s.version === undefined && before && unchanged) return { suite: before, created: false };
    const version = s.version ?? (before ? before.version + 1 : 1);
    const suite: Suite = { ...content, version, status: 'active', createdAt: ports.now().toISOString() };
    const { written } = await ports.records.put(
      // A fresh revision: an `updateSuite` that read the version before this one can no longer write over it.
      suiteRecord.encode({ kind: 'suite', ...suite, revision: randomUUID() }),
      { condition: { kind: 'absentOrOlder', field: 'version', value: version } },
    );
    if (written) return { suite, created: true, ...(before && before.version < version ? { previousVersion: before.version } : {}) };
    const stored = (await findSuite(ports.records, s.id))!;
    if (s.version === undefined && attempt < AUTO_VERSION_TRIES) continue; // a concurrent registration took this version
    if (s.version === undefined && !CONTENT_FIELDS.every((f) => isDeepStrictEqual(stored[f], suite[f]))) {
      throw new ConflictError(`suite ${s.id} is being registered by others at the same time (now version ${stored.version}); retry`);
    }
    if (stored.version > version) {
      throw new ValidationError(`Invalid suite: ${s.id} is at version ${stored.version}; register a higher version than that (or omit version)`, [{ path: 'version', message: `must be > ${stored.version}` }]);
    }
    if (!CONTENT_FIELDS.every((f) => isDeepStrictEqual(stored[f], suite[f]))) {
      throw new ValidationError(`Invalid suite: ${s.id} version ${version} is already registered with other content; bump the version (or omit it)`, [{ path: 'version', message: 'already registered with other content' }]);
    }
    return { suite: stored, created: false };
  }
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
