/**
 * Puts a task's repository on this machine for a rollout job: a local path or git path as it is (resolved against
 * `baseDir`), a remote git URL cloned once per URL into `workDir`, a blob tarball (`.tar`, `.tar.gz`) downloaded
 * and unpacked once per key. The harness checks out the task's commit itself.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TransientError, ValidationError } from '../errors.ts';
import { localSourceDir } from '../harness/eval/load-suite.ts';
import type { Task } from '../harness/task/task-schema.ts';
import type { BlobsPort } from '../ports/blobs.ts';

const run = promisify(execFile);
const REMOTE_URL = /^[a-z][a-z0-9+.-]*:\/\/|^[^/]+@[^:]+:/i;

export async function fetchTaskSource(task: Task, options: { baseDir: string; workDir: string; blobs: BlobsPort }): Promise<string> {
  const digest = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);
  if (task.repo.kind === 'git' && REMOTE_URL.test(task.repo.url) && !task.repo.url.startsWith('file://')) {
    const dir = join(options.workDir, 'repos', digest(task.repo.url));
    if (!existsSync(join(dir, '.git'))) {
      await mkdir(join(options.workDir, 'repos'), { recursive: true });
      try {
        await run('git', ['clone', '--quiet', '--no-checkout', task.repo.url, dir], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw new TransientError(`task ${task.id}: git clone ${task.repo.url} failed: ${(error as Error).message}`, { cause: error });
      }
    }
    return dir;
  }
  if (task.repo.kind === 'blob') {
    const key = task.repo.key;
    const dir = join(options.workDir, 'tarballs', digest(key));
    if (!existsSync(join(dir, '.complete'))) {
      const body = await options.blobs.get(key);
      if (!body) throw new ValidationError(`task ${task.id}: repository tarball ${key} is not in the blob store`, [{ path: 'repo.key', message: 'missing blob' }]);
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const file = join(options.workDir, 'tarballs', `${digest(key)}.tar`);
      await writeFile(file, body);
      await run('tar', ['-xf', file, '-C', dir]);
      await rm(file, { force: true });
      await writeFile(join(dir, '.complete'), '');
    }
    return dir;
  }
  return localSourceDir(task, join(options.baseDir, 'task.json'));
}
