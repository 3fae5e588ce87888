/**
 * Puts a task's repository on this machine, whichever of the three sources the task names:
 * - `local`: a path (relative to the task file) to a checkout or plain files, used in place; a bare repository is
 *   cloned like a URL (at its HEAD);
 * - `git`: a URL and a commit. A plain path to a (non-bare) checkout is used in place. Any URL (`file://`, `https://`,
 *   `ssh://`, `git://`, `user@host:path`) and any bare repository path is cloned once into the cache, keyed by URL +
 *   commit, as a mirror (every ref, so lenient mode sees the history a real checkout would), the commit must be in it,
 *   and the commit is checked out (detached) — never used in place, so the task's repository is not the workspace and
 *   strict mode's history strip works on a private copy. Without a cache folder, `$TMPDIR/flywheel-sources` is used;
 * - `blob`: the key of a tarball (tar, tar.gz, tar.xz, tar.bz2, tar.zst) in the blobs port, downloaded and extracted
 *   with the system `tar` into the cache keyed by the tarball's content hash, after every member name and link target
 *   was checked to stay inside the extraction folder. A single top-level folder is taken as the root.
 *
 * Cache entries are written in a temporary folder and renamed into place, so concurrent loaders and a crash midway
 * never leave a half-made entry. Every error names the task, the field and what is wrong.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BlobsPort } from '../../ports/blobs.ts';
import { ValidationError } from '../../errors.ts';
import { git } from '../git/run-git.ts';
import { extractTarball, UnsafeTarballError } from './extract-tarball.ts';
import type { Task } from './task-schema.ts';


export interface TaskSourceOptions {
  /** The task file, whose folder relative paths resolve against (default: the current directory). */
  taskFile?: string;
  /** Where fetched repositories and extracted tarballs are kept; default `DEFAULT_SOURCES_CACHE`. */
  cacheDir?: string;
  /** Where `blob` sources are read from. */
  blobs?: BlobsPort;
}

/**
 * A task source that cannot be made ready; `field` is the task field at fault (`repo.url`, `repo.key`, …). Named
 * `ErrorNames.validation`, as all bad input is, so no retry is attempted and HTTP answers 400.
 */
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

/** Where fetched sources go when the caller names no cache folder. */
export const DEFAULT_SOURCES_CACHE = join(tmpdir(), 'flywheel-sources');

/**
 * True for a bare repository (HEAD, objects/ and refs/ at its top, no .git), read from the file system: git is never
 * run inside a repository we do not control (its config could name commands).
 */
export async function isBareRepository(dir: string): Promise<boolean> {
  const [head, objects, refs, dotGit] = await Promise.all(['HEAD', 'objects', 'refs', '.git'].map((n) => stat(join(dir, n)).catch(() => undefined)));
  return Boolean(head?.isFile() && objects?.isDirectory() && refs?.isDirectory() && !dotGit);
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

async function headCommit(gitDir: string): Promise<string | undefined> {
  const r = await git(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { allowFailure: true });
  return r.code === 0 ? r.stdout.trim() : undefined;
}

/**
 * Clones `url` into the cache as a mirror with the commit checked out (detached HEAD, a working tree at the commit).
 * `field` is the task field the URL came from.
 */
async function fetchGit(task: Task, source: { url: string; commit: string; field: string }, cacheDir: string): Promise<string> {
  const { url, commit, field } = source;
  const dir = join(cacheDir, 'git', cacheKey(url, commit));
  await mkdir(dirname(dir), { recursive: true });
  return intoCache(dir, async (tmp) => {
    const gitDir = join(tmp, '.git');
    const clone = await git(['clone', '--quiet', '--mirror', '--', url, gitDir], { allowFailure: true, env: { GIT_TERMINAL_PROMPT: '0' } });
    if (clone.code !== 0) throw new TaskSourceError(task, field, `git clone of ${url} failed: ${clone.stderr.trim().split('\n').map((l) => l.trim()).filter(Boolean).join(' ').slice(0, 400)}`);
    if (!(await commitIn(gitDir, commit))) {
      // Not on any ref (a PR head, a dangling commit): ask the server for it by id.
      await git(['--git-dir', gitDir, 'fetch', '--quiet', 'origin', commit], { allowFailure: true });
      if (!(await commitIn(gitDir, commit))) throw new TaskSourceError(task, field === 'repo.url' ? 'repo.commit' : field, `commit ${commit} is not in ${url}`);
    }
    // A working repository (not bare), the commit checked out: hooks and filters cannot run (the clone copied no
    // config of the source's, and hooks are turned off for the checkout).
    await git(['--git-dir', gitDir, 'config', 'core.bare', 'false']);
    await git(['--git-dir', gitDir, 'update-ref', '--no-deref', 'HEAD', commit]);
    const checkout = await git(['--git-dir', gitDir, '--work-tree', tmp, '-c', 'core.hooksPath=/dev/null', 'read-tree', '-u', '--reset', commit], { allowFailure: true });
    if (checkout.code !== 0) throw new TaskSourceError(task, field, `checkout of ${commit} from ${url} failed: ${checkout.stderr.trim().slice(0, 400)}`);
    await writeFile(join(tmp, '.flywheel-source.json'), `${JSON.stringify({ kind: 'git', url, commit })}\n`);
    // Not part of the checkout: git status stays clean.
    await mkdir(join(gitDir, 'info'), { recursive: true });
    await writeFile(join(gitDir, 'info', 'exclude'), '/.flywheel-source.json\n', { flag: 'a' });
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
  const cacheDir = options.cacheDir ?? DEFAULT_SOURCES_CACHE;
  if (repo.kind === 'local' || (repo.kind === 'git' && !isRemoteGitUrl(repo.url))) {
    const field = repo.kind === 'local' ? 'repo.path' : 'repo.url';
    const dir = repo.kind === 'local' ? at(repo.path) : at(repo.url);
    const st = await stat(dir).catch(() => undefined);
    if (!st?.isDirectory()) throw new TaskSourceError(task, field, `${dir} is not a directory on this machine`);
    if (await isBareRepository(dir)) {
      // A bare repository is the task's whole history: cloned and checked out, never the workspace itself.
      const commit = repo.kind === 'git' ? repo.commit : await headCommit(dir);
      if (!commit) throw new TaskSourceError(task, field, `${dir} is a bare repository without a HEAD commit`);
      return fetchGit(task, { url: pathToFileURL(dir).href, commit, field }, cacheDir);
    }
    // The commit is looked up when the sandbox opens: a missing one is that attempt's infrastructure error.
    return dir;
  }
  if (repo.kind === 'git') return fetchGit(task, { url: repo.url, commit: repo.commit, field: 'repo.url' }, cacheDir);
  if (!options.blobs) throw new TaskSourceError(task, 'repo.key', 'a blob source needs the blobs port');
  return fetchBlob(task as Task & { repo: { kind: 'blob' } }, cacheDir, options.blobs);
}
