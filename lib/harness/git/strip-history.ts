/**
 * Strict mode's history strip. The agent must see the files of the base commit in a repository that can answer no
 * question about the past or the future: no later commits, tags, branches, remotes, reflog, stashes, notes, hooks or
 * unreachable packed objects. The stripped repository holds exactly the objects reachable from the base commit's TREE
 * (copied by `rev-list --objects | pack-objects`, never by alternates) plus one parentless commit of that tree with a
 * fixed author, date and message, so the commit itself carries no information (not even the base sha).
 */
import { mkdir, rename, writeFile, rm, cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { cleanGitEnv, git } from './run-git.ts';

/** Author, committer and message of the synthetic root commit: constant, so they say nothing. */
export const SYNTHETIC_AUTHOR = { name: 'Flywheel', email: 'flywheel@invalid', date: '@0 +0000' } as const;
export const SYNTHETIC_MESSAGE = 'Task base\n';
export const SYNTHETIC_BRANCH = 'main';

/** The minimal config of a stripped repository; the audit refuses any other key. */
export const STRIPPED_CONFIG =
  '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n';

export interface StrippedRepo {
  /** The `.git` directory written. */
  gitDir: string;
  /** Tree of the base commit (and of the synthetic root). */
  tree: string;
  /** The synthetic parentless commit HEAD points at. */
  rootCommit: string;
  /** Every object id reachable from the base tree: the only objects the sandbox may read. */
  allowedObjects: Set<string>;
}

/** Resolves `rev` (default HEAD) of a repository to its commit and tree ids. */
export async function resolveBase(gitDir: string, rev = 'HEAD'): Promise<{ commit: string; tree: string }> {
  const { stdout } = await git(['--git-dir', gitDir, 'rev-parse', `${rev}^{commit}`, `${rev}^{tree}`]);
  const [commit, tree] = stdout.trim().split('\n');
  if (!commit || !tree) throw new Error(`cannot resolve ${rev} in ${gitDir}`);
  return { commit, tree };
}

/** Object ids reachable from a tree, read from the (trusted) source repository. */
export async function reachableFromTree(gitDir: string, tree: string): Promise<{ ids: Set<string>; list: string }> {
  const { stdout } = await git(['--git-dir', gitDir, 'rev-list', '--objects', '--no-object-names', tree]);
  const ids = new Set(stdout.split('\n').filter(Boolean));
  return { ids, list: stdout };
}

/**
 * Writes a fresh `.git` at `targetGitDir` holding only the base tree's objects and one synthetic root commit.
 * `workTree`, when given, is used to refresh the index's stat data so `git status` in the sandbox is fast.
 *
 * @example
 * const repo = await buildStrippedRepo({ sourceGitDir: '/src/.git', base: 'abc123', targetGitDir: '/ws/.git' });
 */
/**
 * Writes the one parentless commit of `tree` that a stripped repository holds, with a fixed author, date and
 * message so it carries no information about the source's history, and points the branch at it.
 */
export async function commitSyntheticRoot(gitDir: string, tree: string): Promise<string> {
  const env = {
    GIT_AUTHOR_NAME: SYNTHETIC_AUTHOR.name,
    GIT_AUTHOR_EMAIL: SYNTHETIC_AUTHOR.email,
    GIT_AUTHOR_DATE: SYNTHETIC_AUTHOR.date,
    GIT_COMMITTER_NAME: SYNTHETIC_AUTHOR.name,
    GIT_COMMITTER_EMAIL: SYNTHETIC_AUTHOR.email,
    GIT_COMMITTER_DATE: SYNTHETIC_AUTHOR.date,
  };
  const rootCommit = (await git(['--git-dir', gitDir, 'commit-tree', tree], { env, input: SYNTHETIC_MESSAGE })).stdout.trim();
  await writeFile(join(gitDir, 'refs', 'heads', SYNTHETIC_BRANCH), `${rootCommit}\n`);
  return rootCommit;
}

export async function buildStrippedRepo(input: {
  sourceGitDir: string;
  base?: string;
  targetGitDir: string;
  workTree?: string;
}): Promise<StrippedRepo> {
  const { tree } = await resolveBase(input.sourceGitDir, input.base ?? 'HEAD');
  return buildStrippedRepoFromTree({ ...input, tree });
}

export async function buildStrippedRepoFromTree(input: {
  sourceGitDir: string;
  tree: string;
  targetGitDir: string;
  workTree?: string;
}): Promise<StrippedRepo> {
  const { sourceGitDir, tree, targetGitDir } = input;
  const { ids, list } = await reachableFromTree(sourceGitDir, tree);
  await mkdir(join(targetGitDir, 'objects', 'pack'), { recursive: true });
  await mkdir(join(targetGitDir, 'objects', 'info'), { recursive: true });
  await mkdir(join(targetGitDir, 'refs', 'heads'), { recursive: true });
  await mkdir(join(targetGitDir, 'refs', 'tags'), { recursive: true });
  await writeFile(join(targetGitDir, 'HEAD'), `ref: refs/heads/${SYNTHETIC_BRANCH}\n`);
  await writeFile(join(targetGitDir, 'config'), STRIPPED_CONFIG);
  // Pack exactly the listed objects (reusing the source's deltas, so this is mostly a copy). `--stdout` into the
  // target's index-pack: `pack-objects <name>` would write its temporary file in the SOURCE's objects/pack.
  await copyObjects(sourceGitDir, targetGitDir, list);
  const rootCommit = await commitSyntheticRoot(targetGitDir, tree);
  await git(['--git-dir', targetGitDir, 'read-tree', tree]);
  if (input.workTree) {
    await git(['--git-dir', targetGitDir, '--work-tree', input.workTree, 'update-index', '-q', '--refresh'], {
      allowFailure: true,
    });
  }
  return { gitDir: targetGitDir, tree, rootCommit, allowedObjects: ids };
}

/** Where `stripHistory` keeps the real `.git` and what it needs to put it back. */
export interface HistoryVault {
  repoDir: string;
  vaultDir: string;
  /** The real `.git`, moved here untouched. */
  vaultGitDir: string;
}

/**
 * In-place strip: moves `repoDir/.git` into `vaultDir` (which must be out of the sandbox's reach) and writes a
 * stripped `.git` in its place. The working tree must already hold the base commit's files.
 * `restoreHistory` puts the original back byte for byte.
 *
 * @example
 * const stripped = await stripHistory({ repoDir: '/work/task', vaultDir: '/var/flywheel/vault/attempt-1' });
 * // … run the attempt …
 * await restoreHistory({ repoDir: '/work/task', vaultDir: '/var/flywheel/vault/attempt-1' });
 */
export async function stripHistory(input: {
  repoDir: string;
  vaultDir: string;
  base?: string;
}): Promise<StrippedRepo & HistoryVault> {
  const realGit = join(input.repoDir, '.git');
  const { tree } = await resolveBase(realGit, input.base ?? 'HEAD');
  await mkdir(input.vaultDir, { recursive: true });
  if ((await readdir(input.vaultDir)).length > 0) throw new Error(`vault ${input.vaultDir} is not empty`);
  const vaultGitDir = join(input.vaultDir, 'git');
  await moveDir(realGit, vaultGitDir);
  try {
    const stripped = await buildStrippedRepoFromTree({
      sourceGitDir: vaultGitDir,
      tree,
      targetGitDir: realGit,
      workTree: input.repoDir,
    });
    return { ...stripped, repoDir: input.repoDir, vaultDir: input.vaultDir, vaultGitDir };
  } catch (error) {
    await rm(realGit, { recursive: true, force: true });
    await moveDir(vaultGitDir, realGit);
    throw error;
  }
}

/** rename(2), or copy + remove across filesystems (timestamps and modes kept). */
export async function moveDir(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if (!(error instanceof Error && 'code' in error && error.code === 'EXDEV')) throw error;
    await cp(from, to, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true, errorOnExist: true });
    await rm(from, { recursive: true, force: true });
  }
}

/** `git pack-objects --stdout` in the source piped to `git index-pack --stdin` in the target; nothing written in the source. */
function copyObjects(sourceGitDir: string, targetGitDir: string, list: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const env = cleanGitEnv();
    const pack = spawn('git', ['--git-dir', sourceGitDir, 'pack-objects', '-q', '--stdout', '--threads=1'], { env });
    const index = spawn('git', ['--git-dir', targetGitDir, 'index-pack', '--stdin'], { env, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    pack.stderr.on('data', (d: Buffer) => (err += d.toString()));
    index.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    pack.stdout.pipe(index.stdin!);
    pack.stdin.end(list);
    let pending = 2;
    let failed = false;
    const done = (code: number | null): void => {
      if (code !== 0 && !failed) {
        failed = true;
        reject(new Error(`copying objects failed: ${err.trim()}`));
      }
      if (--pending === 0 && !failed) resolve();
    };
    pack.on('close', done);
    index.on('close', done);
    pack.on('error', reject);
    index.on('error', reject);
  });
}
