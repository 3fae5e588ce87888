import { readdir } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ValidationError } from '../../errors.ts';
import { loadTask } from '../task/load-task.ts';
import { prepareTaskSource, type TaskSourceOptions } from '../task/prepare-task-source.ts';
import type { Task } from '../task/task-schema.ts';

/** A task ready to run here: the task and its repository on this machine. */
export interface SuiteTask {
  task: Task;
  sourceDir: string;
  /** The task file it came from, when loaded from a folder. */
  file?: string;
}

/**
 * Where a task's repository lives on this machine. A `local` path, or a `git` URL that is a path (or `file://`),
 * is resolved against the task file's folder; remote git URLs and blob tarballs need fetching first
 * (`prepareTaskSource`, which `loadSuite` calls when given a cache folder).
 */
export function localSourceDir(task: Task, taskFile?: string): string {
  const base = taskFile ? dirname(resolve(taskFile)) : process.cwd();
  const at = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  if (task.repo.kind === 'local') return at(task.repo.path);
  if (task.repo.kind === 'git') {
    const url = task.repo.url;
    if (url.startsWith('file://')) return new URL(url).pathname;
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^[^/]+@[^:]+:/.test(url)) return at(url);
  }
  throw new ValidationError(`task ${task.id}: eval run needs a repository on this machine (repo.kind local, or a git path); got ${task.repo.kind === 'git' ? task.repo.url : `blob ${task.repo.key}`}`, [
    { path: 'repo', message: 'not a local repository' },
  ]);
}

/**
 * Loads every `*.json` task file of a suite folder (recursively, in name order), validating each; errors name the file.
 * Each task's repository is made ready with `prepareTaskSource`: local paths as they are, git URLs cloned and blob
 * tarballs extracted into `options.cacheDir` (without one, a remote source is an error naming the task and field).
 *
 * @example
 * const tasks = await loadSuite('suites/smoke', { cacheDir: '.flywheel/sources', blobs: ports.blobs });
 */
export async function loadSuite(dir: string, options: Omit<TaskSourceOptions, 'taskFile'> = {}): Promise<SuiteTask[]> {
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
