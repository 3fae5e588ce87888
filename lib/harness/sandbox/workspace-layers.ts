/**
 * The read-only layers an attempt's workspace is made of, built once per base tree and cached: the base commit's
 * files (a snapshot written with `checkout-index`, never touching the source's index) and, in strict mode, the
 * stripped `.git` of `lib/harness/git/strip-history.ts`. Each attempt then only mounts an overlay (a private upper
 * layer on top of these) or, where overlayfs is unavailable, copies them with `cp --reflink=auto`.
 *
 * Hardlinks were measured and rejected: a file edited in place (`>>`, `sed -i` is fine but `echo >>` is not) would
 * change the cached layer, and nothing cheap forces every writer to replace rather than modify.
 *
 * Sandboxed commands run as an unprivileged uid, so the layers are owned by it (chowned once, when built): overlayfs
 * checks permissions against the lower file's owner, and a copy keeps it. Files with more than one link are left
 * alone — they are git objects a lenient clone shares with the source repository (read-only, never written in place),
 * whose owner must not change.
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { git } from '../git/run-git.ts';
import { buildStrippedRepoFromTree, commitSyntheticRoot, resolveBase, STRIPPED_CONFIG, SYNTHETIC_BRANCH } from '../git/strip-history.ts';
import type { HarnessMode } from '../task/harness-mode.ts';

const run = promisify(execFile);

export interface WorkspaceLayers {
  /** Overlay lower layers, topmost first. */
  lowers: string[];
  /** The cached snapshot of the base tree's files (read-only; what an environment resolver reads lockfiles from). */
  treeDir: string;
  /** Tree the attempt starts from (diffs are taken against it). */
  tree: string;
  /** Strict mode: what the audit checks against. */
  strict?: { rootCommit: string; allowedObjects: Set<string> };
  /** The real source directory, which a strict sandbox must not see. */
  sourceDir: string;
  /** Whether the sandbox must still read the source's `.git` (lenient clones share its objects). */
  needsSource: boolean;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The uid and gid sandboxed commands run as (who must be able to write the workspace). */
export interface LayerOwner {
  uid: number;
  gid: number;
}

/** Gives `dir` and everything in it to `owner`, except files with several links (shared git objects); links not followed. */
export async function chownLayer(dir: string, owner: LayerOwner): Promise<void> {
  await run('find', [dir, '(', '-type', 'd', '-o', '-links', '1', ')', '-exec', 'chown', '-h', `${owner.uid}:${owner.gid}`, '{}', '+']);
}

/** Builds `final` with `build(tmp)` unless it exists; concurrent builders race safely through rename(2). */
async function cached(cacheDir: string, name: string, build: (dir: string) => Promise<void>, owner?: LayerOwner): Promise<string> {
  const final = join(cacheDir, name);
  const st = await stat(final).catch(() => undefined);
  if (st) {
    // A layer cached before layers were owned by the sandbox user (or for another uid): given over once.
    if (owner && st.uid !== owner.uid) await chownLayer(final, owner);
    return final;
  }
  const tmp = join(cacheDir, `.tmp-${randomUUID()}`);
  await mkdir(tmp, { recursive: true });
  try {
    await build(tmp);
    if (owner) await chownLayer(tmp, owner);
    await rename(tmp, final).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST' && error.code !== 'ENOTEMPTY') throw error;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return final;
}

async function snapshotOfTree(cacheDir: string, gitDir: string, tree: string, owner?: LayerOwner): Promise<string> {
  return cached(cacheDir, `files-${tree}`, async (dir) => {
    const index = `${dir}.index`;
    try {
      await git(['--git-dir', gitDir, 'read-tree', tree], { env: { GIT_INDEX_FILE: index } });
      await git(['--git-dir', gitDir, '--work-tree', dir, 'checkout-index', '-a', '-q'], { env: { GIT_INDEX_FILE: index } });
    } finally {
      await rm(index, { force: true });
    }
  }, owner);
}

/**
 * @example
 * const layers = await prepareLayers({ cacheDir, sourceDir: '/tasks/repo', baseCommit: 'abc', mode: 'strict' });
 */
export async function prepareLayers(input: {
  cacheDir: string;
  sourceDir: string;
  baseCommit?: string;
  mode: HarnessMode;
  /** Scratch directory of this attempt (for a source without `.git`). */
  scratchDir: string;
  /** Who the layers are given to (the sandbox's uid); absent: left as built. */
  owner?: LayerOwner;
}): Promise<WorkspaceLayers> {
  const sourceDir = await realpath(input.sourceDir);
  await mkdir(input.cacheDir, { recursive: true });
  const gitDir = join(sourceDir, '.git');
  const owner = input.owner;
  if (!(await exists(gitDir))) return plainLayers(sourceDir, input.scratchDir, input.mode, owner);

  const { commit, tree } = await resolveBase(gitDir, input.baseCommit ?? 'HEAD');
  const files = await snapshotOfTree(input.cacheDir, gitDir, tree, owner);
  if (input.mode === 'strict') {
    const layer = await cached(input.cacheDir, `strict-${tree}`, async (dir) => {
      const stripped = await buildStrippedRepoFromTree({ sourceGitDir: gitDir, tree, targetGitDir: join(dir, '.git'), workTree: files });
      await writeFile(`${dir}.meta.json`, JSON.stringify({ rootCommit: stripped.rootCommit, allowed: [...stripped.allowedObjects] }));
      await rename(`${dir}.meta.json`, join(input.cacheDir, `strict-${tree}.json`));
    }, owner);
    const meta = JSON.parse(await readFile(`${layer}.json`, 'utf8')) as { rootCommit: string; allowed: string[] };
    return {
      lowers: [layer, files],
      treeDir: files,
      tree,
      strict: { rootCommit: meta.rootCommit, allowedObjects: new Set(meta.allowed) },
      sourceDir,
      needsSource: false,
    };
  }
  // Lenient: a local clone (objects hardlinked, which is safe: objects are immutable and overlay copies up before any
  // write), so all history stays readable without the sandbox seeing the source; HEAD detached at the base commit.
  const key = createHash('sha256').update(`${sourceDir}\0${commit}`).digest('hex').slice(0, 24);
  const layer = await cached(input.cacheDir, `lenient-${key}`, async (dir) => {
    await git(['clone', '--quiet', '--local', '--no-checkout', '--template=', sourceDir, dir]);
    await git(['--git-dir', join(dir, '.git'), 'update-ref', '--no-deref', 'HEAD', commit]);
    await git(['--git-dir', join(dir, '.git'), 'read-tree', tree]);
    await git(['--git-dir', join(dir, '.git'), '--work-tree', files, 'update-index', '-q', '--refresh'], { allowFailure: true });
  }, owner);
  return { lowers: [layer, files], treeDir: files, tree, sourceDir, needsSource: false };
}

/**
 * A source that is plain files: a one-commit repository is made for diffs, and the files are copied (every one,
 * ignored ones too, as the source shows them), both per attempt in its scratch folder, so the lower layers are owned
 * by the sandbox user and the source folder itself is never a layer.
 */
async function plainLayers(sourceDir: string, scratchDir: string, mode: HarnessMode, owner?: LayerOwner): Promise<WorkspaceLayers> {
  const layer = join(scratchDir, 'git-layer');
  const gitDir = join(layer, '.git');
  await mkdir(join(gitDir, 'refs', 'heads'), { recursive: true });
  await mkdir(join(gitDir, 'objects'), { recursive: true });
  await writeFile(join(gitDir, 'HEAD'), `ref: refs/heads/${SYNTHETIC_BRANCH}\n`);
  await writeFile(join(gitDir, 'config'), STRIPPED_CONFIG);
  await git(['--git-dir', gitDir, '--work-tree', sourceDir, 'add', '-A']);
  const tree = (await git(['--git-dir', gitDir, 'write-tree'])).stdout.trim();
  const rootCommit = await commitSyntheticRoot(gitDir, tree);
  const allowed = (await git(['--git-dir', gitDir, 'rev-list', '--objects', '--no-object-names', tree])).stdout;
  const files = join(scratchDir, 'files');
  await copyLayers([sourceDir], files);
  if (owner) await Promise.all([chownLayer(layer, owner), chownLayer(files, owner)]);
  return {
    lowers: [layer, files],
    treeDir: files,
    tree,
    strict: mode === 'strict' ? { rootCommit, allowedObjects: new Set(allowed.split('\n').filter(Boolean)) } : undefined,
    sourceDir,
    needsSource: false,
  };
}

/** Mounts the overlay; false when this kernel or container does not allow it. */
export async function mountOverlay(lowers: string[], upper: string, work: string, merged: string): Promise<boolean> {
  await mkdir(upper, { recursive: true });
  await mkdir(work, { recursive: true });
  await mkdir(merged, { recursive: true });
  try {
    await run('mount', ['-t', 'overlay', 'flywheel-ws', '-o', `lowerdir=${lowers.join(':')},upperdir=${upper},workdir=${work}`, merged]);
    return true;
  } catch {
    return false;
  }
}

export async function copyLayers(lowers: string[], merged: string): Promise<void> {
  await mkdir(merged, { recursive: true });
  // Bottom layer first, so upper layers win.
  for (const layer of [...lowers].reverse()) {
    await run('cp', ['-a', '--reflink=auto', `${layer}/.`, `${merged}/`]);
  }
}

export async function unmount(path: string): Promise<void> {
  await run('umount', [path]).catch(() => run('umount', ['-l', path]).catch(() => undefined));
}
