import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { listSuiteTasks, readStoredTask } from '../../forge/forge-records.ts';
import type { BlobsPort } from '../../ports/blobs.ts';
import type { RecordsPort } from '../../ports/records.ts';
import { findSuite } from '../../registry/get-suite.ts';
import { taskRecord } from '../../registry/record-codecs.ts';
import { registryKeys } from '../../registry/record-keys.ts';
import { loadTask } from '../task/load-task.ts';
import { isRemoteGitUrl, prepareTaskSource, type TaskSourceOptions } from '../task/prepare-task-source.ts';
import { parseTask, type Task } from '../task/task-schema.ts';

/** A task ready to run here: the task and its repository on this machine. */
export interface SuiteTask {
  task: Task;
  sourceDir: string;
  /** The task file it came from, when loaded from a folder. */
  file?: string;
}

/**
 * The task's repository as a folder on this machine that a job may use from any working directory, for a source
 * that is on this machine: a `local` path or a `git` URL that is a path or `file://`, resolved against the task
 * file's folder. It goes through `prepareTaskSource`, so a plain (non-bare) checkout or folder comes back as its
 * absolute path, used in place, while a bare repository and a `file://` URL are cloned into the sources cache with
 * the commit checked out (a `local` bare repository at its HEAD) and that private checkout comes back: never the
 * repository itself, whose history strict mode must hide. Remote git URLs and blob tarballs are not on this machine
 * (`Flywheel.ValidationError`): the job fetches them itself.
 *
 * @example
 * const path = await localSourceDir(task, '/abs/suites/smoke/calc.json', { cacheDir: '.flywheel/sources' });
 */
export async function localSourceDir(task: Task, taskFile?: string, options: { cacheDir?: string } = {}): Promise<string> {
  const repo = task.repo;
  const here = repo.kind === 'local' || (repo.kind === 'git' && (!isRemoteGitUrl(repo.url) || repo.url.startsWith('file://')));
  if (!here) {
    throw new ValidationError(`task ${task.id}: needs a repository on this machine (repo.kind local, or a git path or file:// URL); got ${repo.kind === 'git' ? repo.url : `blob ${repo.key}`}`, [
      { path: 'repo', message: 'not a repository on this machine' },
    ]);
  }
  return prepareTaskSource(task, { ...(taskFile ? { taskFile } : {}), ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}) });
}

/** Where `loadSuite` may look for a suite that is not a folder: a registered suite name, read from records. */
export interface LoadSuiteOptions extends Omit<TaskSourceOptions, 'taskFile'> {
  records?: RecordsPort;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/**
 * Loads every `*.json` task file of a suite folder (recursively, in name order), validating each; errors name the file.
 * Each task's repository is made ready with `prepareTaskSource`: local paths as they are, git URLs cloned and blob
 * tarballs extracted into `options.cacheDir` (without one, a remote source is an error naming the task and field).
 *
 * When `dir` is not a folder and `options.records` is given, it is read as a registered suite's name instead
 * (`loadSuiteFromRecords`).
 *
 * @example
 * const tasks = await loadSuite('suites/smoke', { cacheDir: '.flywheel/sources', blobs: ports.blobs });
 * const forged = await loadSuite('calc-ts', { cacheDir: '.flywheel/sources', blobs: ports.blobs, records: ports.records });
 */
export async function loadSuite(dir: string, options: LoadSuiteOptions = {}): Promise<SuiteTask[]> {
  const { records, ...sourceOptions } = options;
  if (records && options.blobs && !(await isDirectory(dir))) return loadSuiteFromRecords({ records, blobs: options.blobs }, dir, sourceOptions);
  return loadSuiteFolder(dir, sourceOptions);
}

async function loadSuiteFolder(dir: string, options: Omit<TaskSourceOptions, 'taskFile'>): Promise<SuiteTask[]> {
  const root = resolve(dir);
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
  if (files.length === 0) throw new ValidationError(`suite ${dir} has no task files (*.json)`, [{ path: 'suite', message: 'empty' }]);
  const tasks: SuiteTask[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const task = await loadTask(file);
    const other = seen.get(task.id);
    if (other) throw new ValidationError(`task id ${task.id} appears twice: ${other} and ${file}`, [{ path: 'id', message: 'duplicate' }]);
    seen.set(task.id, file);
    tasks.push({ task, sourceDir: await prepareTaskSource(task, { ...options, taskFile: file }), file });
  }
  return tasks;
}

/** The task JSON a task record carries: its `task` attribute, else its task blob (`taskKey`), else the item itself. */
async function taskOfRecord({ record, key }: StoredTaskRecord, blobs: BlobsPort): Promise<Task> {
  const label = `record ${key.pk} / ${key.sk}`;
  if (record.task) return parseTask(record.task, label);
  if (record.taskKey !== undefined) return readStoredTask(blobs, { taskKey: record.taskKey });
  return parseTask(record, label);
}

/** A task record as read (the registry's view of it, or the forge's own) and where it is stored. */
interface StoredTaskRecord {
  record: { status?: string; task?: object; taskKey?: string };
  key: { pk: string; sk: string };
}

/**
 * Loads a registered suite from records, skipping retired tasks. A registry suite (`SUITE#<suite>`, see
 * lib/registry) whose tasks are records lists its task ids, each the record `TASK#<suite>#<id>` (sk `TASK` unless the
 * suite says otherwise); a folder suite loads that folder. Without a registry record, the forge's task records of the
 * suite (`TASK#<suite>#<id>` / `TASK`, through the suite index) are the suite. A task's repository is a blob
 * (`forge/suites/<suite>/tasks/<id>/repo.tar.gz`), extracted into `options.cacheDir` by `prepareTaskSource`.
 *
 * @example
 * const tasks = await loadSuiteFromRecords(ports, 'calc-ts', { cacheDir: '.flywheel/sources' });
 */
export async function loadSuiteFromRecords(
  ports: { records: RecordsPort; blobs: BlobsPort },
  suite: string,
  options: Omit<TaskSourceOptions, 'taskFile' | 'blobs'> = {},
): Promise<SuiteTask[]> {
  const sourceOptions = { ...options, blobs: ports.blobs };
  const registered = await findSuite(ports.records, suite);
  const items: StoredTaskRecord[] = [];
  if (registered?.tasks.kind === 'folder') return loadSuiteFolder(registered.tasks.path, sourceOptions);
  if (registered?.tasks.kind === 'blobs') throw new ValidationError(`suite ${suite}: tasks under blob prefix ${registered.tasks.prefix} are not loadable here; export them to a folder`, [{ path: 'suite', message: 'blob-prefix suite' }]);
  if (registered?.tasks.kind === 'records') {
    for (const id of registered.taskIds) {
      const key = registryKeys.task(suite, id, registered.tasks.sk);
      const record = taskRecord.decodeIfPresent(await ports.records.get(key.pk, key.sk));
      if (!record) throw new NotFoundError(`suite ${suite}: task record ${key.pk} / ${key.sk} is missing`);
      items.push({ record, key });
    }
  } else {
    items.push(...(await listSuiteTasks(ports.records, suite)).map((record) => ({ record, key: registryKeys.task(suite, record.taskId) })));
  }
  const live = items.filter((item) => item.record.status !== 'retired');
  if (live.length === 0) throw new NotFoundError(`suite ${suite} is neither a folder nor a registered suite with active tasks`);
  const tasks: SuiteTask[] = [];
  for (const item of live) {
    const task = await taskOfRecord(item, ports.blobs);
    tasks.push({ task, sourceDir: await prepareTaskSource(task, sourceOptions) });
  }
  return tasks;
}
