/**
 * Puts a task's repository on this machine, whichever of the three sources the task names:
 * - `local`: a path (relative to the task file), used in place;
 * - `git`: a URL and a commit. A plain path is used in place (and `file://` when no cache folder is given); any URL (`file://`, `https://`, `ssh://`, `git://`,
 *   `user@host:path`) is cloned once into the cache, keyed by URL + commit, as a mirror (every ref, so lenient mode
 *   sees the history a real checkout would), and the commit must be in it;
 * - `blob`: the key of a tarball (tar, tar.gz, tar.xz, tar.bz2, tar.zst) in the blobs port, downloaded and extracted
 *   with the system `tar` into the cache keyed by the tarball's content hash, after every member name and link target
 *   was checked to stay inside the extraction folder. A single top-level folder is taken as the root.
 *
 * Cache entries are written in a temporary folder and renamed into place, so concurrent loaders and a crash midway
 * never leave a half-made entry. Every error names the task, the field and what is wrong.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import type { BlobsPort } from '../../ports/blobs.ts';
import { ValidationError } from '../../errors.ts';
import { git } from '../git/run-git.ts';
import { extractTarball, UnsafeTarballError } from './extract-tarball.ts';
import type { Task } from './task-schema.ts';


export interface TaskSourceOptions {
  /** The task file, whose folder relative paths resolve against (default: the current directory). */
  taskFile?: string;
  /** Where fetched repositories and extracted tarballs are kept. Needed for git URLs and blobs. */
  cacheDir?: string;
  /** Where `blob` sources are read from. */
  blobs?: BlobsPort;
}

/** A task source that cannot be made ready; `field` is the task field at fault (`repo.url`, `repo.key`, …). */
export class TaskSourceError extends ValidationError {
  constructor(task: Task, field: string, message: string) {
    super(`task ${task.id}: ${field}: ${message}`, [{ path: field, message }]);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** True for a git URL that names a remote (or `file://`) rather than a path on this machine. */
export function isRemoteGitUrl(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/\s]+@[^:/\s]+:/.test(url);
}

async function intoCache(dir: string, build: (tmp: string) => Promise<void>): Promise<string> {
  if (await exists(join(dir, '.flywheel-source.json'))) return dir;
  const tmp = `${dir}.tmp-${randomUUID()}`;
  await mkdir(tmp, { recursive: true });
  try {
    await build(tmp);
    await rename(tmp, dir).catch(async (error: NodeJS.ErrnoException) => {
      // Someone else finished first: theirs is as good.
      if (error.code !== 'EEXIST' && error.code !== 'ENOTEMPTY') throw error;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return dir;
}

function cacheKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);
}

async function commitIn(gitDir: string, commit: string): Promise<boolean> {
  const r = await git(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', `${commit}^{commit}`], { allowFailure: true });
  return r.code === 0;
}

async function fetchGit(task: Task & { repo: { kind: 'git' } }, cacheDir: string): Promise<string> {
  const { url, commit } = task.repo;
  const dir = join(cacheDir, 'git', cacheKey(url, commit));
  await mkdir(dirname(dir), { recursive: true });
  return intoCache(dir, async (tmp) => {
    const gitDir = join(tmp, '.git');
    const clone = await git(['clone', '--quiet', '--mirror', '--', url, gitDir], { allowFailure: true, env: { GIT_TERMINAL_PROMPT: '0' } });
    if (clone.code !== 0) throw new TaskSourceError(task, 'repo.url', `git clone of ${url} failed: ${clone.stderr.trim().split('\n').map((l) => l.trim()).filter(Boolean).join(' ').slice(0, 400)}`);
    if (!(await commitIn(gitDir, commit))) {
      // Not on any ref (a PR head, a dangling commit): ask the server for it by id.
      await git(['--git-dir', gitDir, 'fetch', '--quiet', 'origin', commit], { allowFailure: true });
      if (!(await commitIn(gitDir, commit))) throw new TaskSourceError(task, 'repo.commit', `commit ${commit} is not in ${url}`);
    }
    // A working repository (not bare) without a checkout: the sandbox takes files from the commit's tree.
    await git(['--git-dir', gitDir, 'config', 'core.bare', 'false']);
    await git(['--git-dir', gitDir, 'update-ref', '--no-deref', 'HEAD', commit]);
    await writeFile(join(tmp, '.flywheel-source.json'), `${JSON.stringify({ kind: 'git', url, commit })}\n`);
  });
}

async function fetchBlob(task: Task & { repo: { kind: 'blob' } }, cacheDir: string, blobs: BlobsPort): Promise<string> {
  const { key, baseCommit } = task.repo;
  const bytes = await blobs.get(key);
  if (!bytes) throw new TaskSourceError(task, 'repo.key', `no blob ${key}`);
  const digest = createHash('sha256').update(bytes).digest('hex');
  const dir = join(cacheDir, 'blob', digest.slice(0, 32));
  await mkdir(dirname(dir), { recursive: true });
  const ready = await intoCache(dir, async (tmp) => {
    const file = `${tmp}.tar`;
    await writeFile(file, bytes);
    try {
      const root = join(tmp, 'root');
      await mkdir(root);
      await extractTarball(file, root).catch((error: unknown) => {
        if (!(error instanceof UnsafeTarballError)) throw error;
        const message = error.reason === 'unreadable' ? `blob ${key} is ${error.message}` : error.reason === 'extract' ? `blob ${key}: ${error.message}` : error.message;
        throw new TaskSourceError(task, 'repo.key', message);
      });
    } finally {
      await rm(file, { force: true });
    }
    await writeFile(join(tmp, '.flywheel-source.json'), `${JSON.stringify({ kind: 'blob', key, sha256: digest })}\n`);
  });
  // One top-level folder (`repo-1.2/…`) is the repository's root.
  let root = join(ready, 'root');
  const entries = await readdir(root, { withFileTypes: true });
  if (entries.length === 1 && entries[0]!.isDirectory() && entries[0]!.name !== '.git') root = join(root, entries[0]!.name);
  const hasGit = await exists(join(root, '.git'));
  if (baseCommit && !hasGit) throw new TaskSourceError(task, 'repo.baseCommit', `blob ${key} holds no .git folder, so commit ${baseCommit} cannot be checked out`);
  if (baseCommit && !(await commitIn(join(root, '.git'), baseCommit))) throw new TaskSourceError(task, 'repo.baseCommit', `commit ${baseCommit} is not in the repository of blob ${key}`);
  return root;
}

/**
 * The directory of the task's repository on this machine, fetching it first when it is remote.
 *
 * @example
 * const sourceDir = await prepareTaskSource(task, { taskFile: 'suites/smoke/calc.json', cacheDir: '.flywheel/sources', blobs });
 */
export async function prepareTaskSource(task: Task, options: TaskSourceOptions = {}): Promise<string> {
  const base = options.taskFile ? dirname(resolve(options.taskFile)) : process.cwd();
  const at = (p: string) => normalize(isAbsolute(p) ? p : resolve(base, p));
  const repo = task.repo;
  // Without a cache, a `file://` URL is read in place (as `eval run` always did); with one it is cloned like any URL.
  const inPlaceFileUrl = repo.kind === 'git' && repo.url.startsWith('file://') && !options.cacheDir;
  if (repo.kind === 'local' || (repo.kind === 'git' && (!isRemoteGitUrl(repo.url) || inPlaceFileUrl))) {
    const field = repo.kind === 'local' ? 'repo.path' : 'repo.url';
    const dir = repo.kind === 'local' ? at(repo.path) : inPlaceFileUrl ? new URL(repo.url).pathname : at(repo.url);
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory()) throw new TaskSourceError(task, field, `${dir} is not a directory on this machine`);
    // The commit is looked up when the sandbox opens: a missing one is that attempt's infrastructure error.
    return dir;
  }
  if (!options.cacheDir) throw new TaskSourceError(task, repo.kind === 'git' ? 'repo.url' : 'repo.key', 'a remote source needs a cache folder (cacheDir) to fetch into');
  if (repo.kind === 'git') return fetchGit(task as Task & { repo: { kind: 'git' } }, options.cacheDir);
  if (!options.blobs) throw new TaskSourceError(task, 'repo.key', 'a blob source needs the blobs port');
  return fetchBlob(task as Task & { repo: { kind: 'blob' } }, options.cacheDir, options.blobs);
}
