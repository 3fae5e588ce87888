/**
 * Evals never leak into training: which attempts a dataset may not read, decided from the registry before any
 * trajectory is touched.
 *
 * - **Private suite** (`visibility: 'private'`, "held out: never shown to training") → every attempt of it is
 *   excluded, reason `private-suite`.
 * - **Held-out task** of a public suite (`split: 'held-out'`, or a task itself marked `visibility: 'private'`) →
 *   excluded, reason `held-out`.
 * - **Train task** of a public suite (`split: 'train'`) → kept.
 * - **Public suite, task not readable** (not stored, unreadable JSON, no split, a folder this machine lacks) → excluded,
 *   reason `split-unknown`: a split we cannot see may be held out, so the safe answer is no.
 * - **Suite not in the registry** (an ad-hoc eval run from task files) → excluded, reason `suite-unknown`, unless the
 *   forge stored the task (`TASK#<suite>#<id>` / `TASK`) and it says `split: 'train'` (and not private): an unknown
 *   suite may be someone's held-out eval, so only a task known to be training data is kept.
 *
 * Tasks are read as the registry's suites store them (`storedTask`: task records or JSON under a blob prefix); a
 * folder suite's task files (`*.json`, any depth) are read from that folder on this machine. Every lookup (suite,
 * task, folder) is cached for the life of one `HeldOutCheck`, i.e. one build.
 *
 * @example
 * const check = heldOutCheck(ports);
 * const reason = await check.reasonOf(attempt); // undefined: may be trained on; else 'private-suite' | 'held-out' | …
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AttemptRecord } from '../../harness/attempt/attempt-record.ts';
import type { Ports } from '../../ports/ports.ts';
import { findSuite } from '../../registry/get-suite.ts';
import type { Suite } from '../../registry/schemas.ts';
import { storedTask } from '../../registry/task-sources.ts';

/** Why an attempt may not be trained on (the manifest's `excluded[].reason`). */
export const HeldOutReasons = {
  privateSuite: 'private-suite',
  heldOut: 'held-out',
  splitUnknown: 'split-unknown',
  suiteUnknown: 'suite-unknown',
} as const;
export type HeldOutReason = (typeof HeldOutReasons)[keyof typeof HeldOutReasons];

type TaskJson = Record<string, unknown>;

export interface HeldOutCheck {
  /** Undefined when the attempt's task is known training data of a public suite; else why it is excluded. */
  reasonOf(attempt: Pick<AttemptRecord, 'suite' | 'taskId'>): Promise<HeldOutReason | undefined>;
}

/**
 * A per-build check of attempts against the registry (suites, their tasks' splits), caching every lookup.
 *
 * @example
 * const check = heldOutCheck(ports);
 * if (await check.reasonOf({ suite: 'forge-py', taskId: 't-1' })) skip();
 */
export function heldOutCheck(ports: Pick<Ports, 'records' | 'blobs'>): HeldOutCheck {
  const suites = new Map<string, Promise<Suite | undefined>>();
  const tasks = new Map<string, Promise<TaskJson | undefined>>();
  const folders = new Map<string, Promise<Map<string, TaskJson>>>();

  const suiteOf = (id: string) => cached(suites, id, () => findSuite(ports.records, id));
  const folderTasks = (path: string) => cached(folders, path, () => readFolderTasks(path));
  const taskOf = (suiteId: string, suite: Suite | undefined, taskId: string) =>
    cached(tasks, `${suiteId}\u0000${taskId}`, async () => {
      if (suite?.tasks.kind === 'folder') return (await folderTasks(suite.tasks.path)).get(taskId);
      // No registry record: the forge's own task record is the only place the split may be known.
      const source = suite ? suite.tasks : ({ kind: 'records', sk: 'TASK' } as const);
      return (await storedTask(ports, suiteId, source, taskId)) ?? undefined;
    });

  return {
    async reasonOf(attempt) {
      const suite = await suiteOf(attempt.suite);
      if (suite?.visibility === 'private') return HeldOutReasons.privateSuite;
      const task = await taskOf(attempt.suite, suite, attempt.taskId);
      const split = task?.['split'];
      if (split === 'held-out' || task?.['visibility'] === 'private') return HeldOutReasons.heldOut;
      if (split === 'train') return undefined;
      return suite ? HeldOutReasons.splitUnknown : HeldOutReasons.suiteUnknown;
    },
  };
}

/** The promise of `load()` for `key`, made once: concurrent callers of one key share it. */
export function cached<T>(map: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let p = map.get(key);
  if (!p) {
    p = load();
    map.set(key, p);
  }
  return p;
}

/** A folder suite's tasks by id; a folder that cannot be read gives none (its attempts are then `split-unknown`). */
async function readFolderTasks(path: string): Promise<Map<string, TaskJson>> {
  const out = new Map<string, TaskJson>();
  let entries;
  try {
    entries = await readdir(path, { recursive: true, withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.json')) continue;
    try {
      const v = JSON.parse(await readFile(join(e.parentPath, e.name), 'utf8')) as unknown;
      if (v !== null && typeof v === 'object' && typeof (v as TaskJson)['id'] === 'string') {
        const id = (v as TaskJson)['id'] as string;
        // The same id twice (the harness refuses such a suite): the stricter reading wins.
        const before = out.get(id);
        if (!before || (v as TaskJson)['split'] !== 'train') out.set(id, v as TaskJson);
      }
    } catch {
      // not a task file
    }
  }
  return out;
}
