/**
 * The forge's private git repository: a bare copy of the input repository into which every candidate's broken tree
 * (and every oracle tree) is written as a commit. Sandboxes open on those commits, so each one starts from exactly
 * the files its check is about, and the input repository is never written to.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { git } from '../harness/git/run-git.ts';
import { buildStrippedRepoFromTree } from '../harness/git/strip-history.ts';
import { prepareTaskSource } from '../harness/task/prepare-task-source.ts';
import { parseTask, TASK_SCHEMA_VERSION } from '../harness/task/task-schema.ts';
import { ValidationError } from '../errors.ts';
import type { ForgeRepo } from './schemas.ts';

/** A fixed author, so a tree always gives the same commit id. */
const FORGE_AUTHOR = {
  GIT_AUTHOR_NAME: 'Flywheel Forge',
  GIT_AUTHOR_EMAIL: 'forge@invalid',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'Flywheel Forge',
  GIT_COMMITTER_EMAIL: 'forge@invalid',
  GIT_COMMITTER_DATE: '@0 +0000',
};

export interface WorkRepo {
  /** A repository without a checkout (what sandboxes open, as their `sourceDir`). */
  dir: string;
  /** Its `.git`, which the forge writes commits into. */
  gitDir: string;
  /** Commit and tree of the repository as given. */
  baseCommit: string;
  baseTree: string;
  /** The base tree checked out (what candidates are found in). */
  checkoutDir: string;
  /** Where the source came from, for task provenance. */
  origin: string;
}

/** One file change: new content, or null to delete the file. */
export interface FileEdit {
  path: string;
  content: string | null;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/**
 * Copies the input repository (local checkout, plain folder or git URL) into `workDir/repo` (no checkout) and checks the base
 * commit out to `workDir/base`.
 *
 * @example
 * const work = await prepareWorkRepo({ kind: 'local', path: '/src/calc' }, '/tmp/forge-1');
 */
export async function prepareWorkRepo(repo: ForgeRepo, workDir: string, options: { cacheDir?: string } = {}): Promise<WorkRepo> {
  await mkdir(workDir, { recursive: true });
  const dir = join(workDir, 'repo');
  const gitDir = join(dir, '.git');
  let rev = repo.commit ?? 'HEAD';
  let origin: string;
  if (repo.kind === 'local') {
    const path = resolve(repo.path);
    origin = path;
    if (!(await exists(path))) throw new ValidationError(`repository ${path} does not exist`, [{ path: 'repo.path', message: 'not found' }]);
    const inRepo = await git(['rev-parse', '--show-toplevel'], { cwd: path, allowFailure: true });
    if (inRepo.code === 0 && resolve(inRepo.stdout.trim()) === path) {
      await git(['clone', '--no-checkout', '--quiet', '--no-hardlinks', path, dir]);
    } else {
      // Plain files: one commit of everything git would add (a .gitignore is honoured).
      await git(['init', '--quiet', dir]);
      const index = join(workDir, 'import.index');
      await git(['--git-dir', gitDir, '--work-tree', path, 'add', '-A', '.'], { env: { GIT_INDEX_FILE: index } });
      const tree = (await git(['--git-dir', gitDir, 'write-tree'], { env: { GIT_INDEX_FILE: index } })).stdout.trim();
      const commit = (await git(['--git-dir', gitDir, 'commit-tree', tree], { env: FORGE_AUTHOR, input: 'imported files\n' })).stdout.trim();
      await rm(index, { force: true });
      rev = commit;
    }
  } else {
    origin = repo.url;
    // With a commit and a cache folder, the harness's task-source fetcher clones it once per URL + commit (and
    // fetches a commit no ref names); the forge then copies from that cache.
    const source =
      repo.commit && options.cacheDir
        ? await prepareTaskSource(
            parseTask({ schemaVersion: TASK_SCHEMA_VERSION, id: 'forge-source', suite: 'forge', split: 'train', visibility: 'private', repo: { kind: 'git', url: repo.url, commit: repo.commit }, instruction: 'forge source', testCommand: 'true', failToPass: [] }),
            { cacheDir: options.cacheDir },
          )
        : repo.url;
    await git(['clone', '--no-checkout', '--quiet', source, dir]);
    // A commit no ref names (a PR head) is asked for by id.
    if (repo.commit && (await git(['--git-dir', gitDir, 'cat-file', '-e', `${repo.commit}^{commit}`], { allowFailure: true })).code !== 0) {
      await git(['--git-dir', gitDir, 'fetch', '--quiet', 'origin', repo.commit], { allowFailure: true });
    }
  }
  const resolved = await git(['--git-dir', gitDir, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { allowFailure: true });
  if (resolved.code !== 0) throw new ValidationError(`commit ${rev} is not in ${origin}`, [{ path: 'repo.commit', message: 'not found' }]);
  const baseCommit = resolved.stdout.trim();
  const baseTree = (await git(['--git-dir', gitDir, 'rev-parse', `${baseCommit}^{tree}`])).stdout.trim();
  const checkoutDir = join(workDir, 'base');
  await checkoutTree(gitDir, baseTree, checkoutDir);
  return { dir, gitDir, baseCommit, baseTree, checkoutDir, origin };
}

/** Writes the files of `tree` into `dir` (created), through a private index. */
export async function checkoutTree(gitDir: string, tree: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-idx-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    await git(['--git-dir', gitDir, 'read-tree', tree], { env });
    await git(['--git-dir', gitDir, '--work-tree', dir, 'checkout-index', '-a', '-f', '-q'], { env });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A commit of `base`'s tree with the edits applied (parent `base`); returns its commit and tree.
 *
 * @example
 * const broken = await commitEdits(work.gitDir, work.baseCommit, [{ path: 'src/calc.py', content: stubbed }]);
 */
export async function commitEdits(gitDir: string, base: string, edits: readonly FileEdit[], message = 'forge edit\n'): Promise<{ commit: string; tree: string }> {
  const tree = await treeWithEdits(gitDir, base, edits);
  const commit = (await git(['--git-dir', gitDir, 'commit-tree', tree, '-p', base], { env: FORGE_AUTHOR, input: message })).stdout.trim();
  return { commit, tree };
}

/** The tree of `base` (a commit or tree) with the edits applied. */
export async function treeWithEdits(gitDir: string, base: string, edits: readonly FileEdit[]): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'fw-forge-idx-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    await git(['--git-dir', gitDir, 'read-tree', base], { env });
    for (const edit of edits) {
      if (edit.content === null) {
        await git(['--git-dir', gitDir, 'update-index', '--force-remove', '--', edit.path], { env });
        continue;
      }
      const blob = (await git(['--git-dir', gitDir, 'hash-object', '-w', '--stdin'], { input: edit.content })).stdout.trim();
      const current = (await git(['--git-dir', gitDir, 'ls-files', '-s', '--', edit.path], { env })).stdout.trim();
      const mode = current.split(' ')[0] || '100644';
      await git(['--git-dir', gitDir, 'update-index', '--add', '--cacheinfo', `${mode},${blob},${edit.path}`], { env });
    }
    return (await git(['--git-dir', gitDir, 'write-tree'], { env })).stdout.trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** A `git diff`-style unified patch from one commit to another (binary-safe, full index lines). */
export async function diffCommits(gitDir: string, from: string, to: string): Promise<string> {
  return (await git(['--git-dir', gitDir, '-c', 'core.quotepath=false', 'diff', '--binary', '--full-index', from, to])).stdout;
}

/** Paths of a tree. */
export async function listTreeFiles(gitDir: string, tree: string): Promise<string[]> {
  const { stdout } = await git(['--git-dir', gitDir, 'ls-tree', '-r', '-z', '--name-only', tree]);
  return stdout.split('\0').filter(Boolean);
}

/** A file of a tree, or undefined. */
export async function readTreeFile(gitDir: string, tree: string, path: string): Promise<string | undefined> {
  const r = await git(['--git-dir', gitDir, 'cat-file', '-p', `${tree}:${path}`], { allowFailure: true });
  return r.code === 0 ? r.stdout : undefined;
}

/**
 * A stand-alone repository at `dir` whose only commit is `tree` (the harness's synthetic, history-free root): the
 * task's starting tree, from which no earlier version can be read. Returns that commit.
 */
export async function writeTaskRepo(gitDir: string, tree: string, dir: string): Promise<string> {
  await rm(dir, { recursive: true, force: true });
  await checkoutTree(gitDir, tree, dir);
  const stripped = await buildStrippedRepoFromTree({ sourceGitDir: gitDir, tree, targetGitDir: join(dir, '.git'), workTree: dir });
  return stripped.rootCommit;
}
