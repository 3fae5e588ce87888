/**
 * The strict-mode audit: proves by reachability, never by dates, that a sandbox repository can read nothing but the
 * base tree. Every object git can read there (packs, loose objects and any alternates, via `--batch-all-objects`)
 * must be in the base tree's reachable set, the synthetic root commit, or a set the caller allows (objects the agent
 * created during the attempt); refs, config and the files that carry history (reflogs, packed-refs, shallow, grafts,
 * replace refs, stash, notes, hooks, submodule and worktree git dirs) must be absent or exactly as the strip wrote them.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { git } from './run-git.ts';
import { SYNTHETIC_AUTHOR, SYNTHETIC_BRANCH, SYNTHETIC_MESSAGE } from './strip-history.ts';

export interface HistoryAudit {
  ok: boolean;
  /** Objects the repository can read that are not allowed. */
  foreignObjects: string[];
  /** Everything else found wrong, in words. */
  problems: string[];
  objectCount: number;
}

const FORBIDDEN_PATHS = [
  'logs',
  'packed-refs',
  'shallow',
  'info/grafts',
  'objects/info/alternates',
  'objects/info/http-alternates',
  'FETCH_HEAD',
  'ORIG_HEAD',
  'MERGE_HEAD',
  'CHERRY_PICK_HEAD',
  'modules',
  'worktrees',
  'commondir',
  'rr-cache',
];

const ALLOWED_CONFIG_KEYS = new Set([
  'core.repositoryformatversion',
  'core.filemode',
  'core.bare',
  'core.logallrefupdates',
]);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** The exact bytes the synthetic root commit must have. */
export function expectedRootCommit(tree: string): string {
  const who = `${SYNTHETIC_AUTHOR.name} <${SYNTHETIC_AUTHOR.email}> 0 +0000`;
  return `tree ${tree}\nauthor ${who}\ncommitter ${who}\n\n${SYNTHETIC_MESSAGE}`;
}

/**
 * @example
 * const audit = await auditHistory({ gitDir: '/ws/.git', tree, rootCommit, allowedObjects });
 * if (!audit.ok) throw new Error(audit.problems.join('; '));
 */
export async function auditHistory(input: {
  gitDir: string;
  tree: string;
  rootCommit: string;
  allowedObjects: ReadonlySet<string>;
  /** Objects the agent created during the attempt (for an audit after it ran). */
  agentObjects?: ReadonlySet<string>;
  /** Also run `git fsck --connectivity-only --unreachable` (catches unreachable objects by git's own walk). */
  fsck?: boolean;
}): Promise<HistoryAudit> {
  const { gitDir } = input;
  const problems: string[] = [];
  const foreignObjects: string[] = [];

  const listing = await git(['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], {
    allowFailure: true,
  });
  if (listing.code !== 0) problems.push(`cannot list objects: ${listing.stderr.trim()}`);
  const all = listing.stdout.split('\n').filter(Boolean);
  for (const id of all) {
    if (id === input.rootCommit || input.allowedObjects.has(id) || input.agentObjects?.has(id)) continue;
    foreignObjects.push(id);
  }
  if (foreignObjects.length > 0) problems.push(`${foreignObjects.length} object(s) not reachable from the base tree`);

  const root = await git(['--git-dir', gitDir, 'cat-file', 'commit', input.rootCommit], { allowFailure: true });
  if (root.code !== 0 || root.stdout !== expectedRootCommit(input.tree)) {
    problems.push('the root commit is not the synthetic commit of the base tree');
  }

  const refs = await git(['--git-dir', gitDir, 'for-each-ref', '--format=%(refname) %(objectname)'], { allowFailure: true });
  const refLines = refs.stdout.split('\n').filter(Boolean);
  const expectedRef = `refs/heads/${SYNTHETIC_BRANCH} ${input.rootCommit}`;
  if (refLines.length !== 1 || refLines[0] !== expectedRef) {
    problems.push(`refs must be exactly "${expectedRef}", found: ${refLines.join(', ') || 'none'}`);
  }
  const head = (await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => '')).trim();
  if (head !== `ref: refs/heads/${SYNTHETIC_BRANCH}`) problems.push(`HEAD is "${head}"`);

  for (const rel of FORBIDDEN_PATHS) {
    if (await exists(join(gitDir, rel))) problems.push(`${rel} must not exist`);
  }
  const hooks = await readdir(join(gitDir, 'hooks')).catch((): string[] => []);
  if (hooks.length > 0) problems.push(`hooks present: ${hooks.join(', ')}`);

  const config = await git(['config', '--file', join(gitDir, 'config'), '--list', '--name-only'], { allowFailure: true });
  for (const key of config.stdout.split('\n').filter(Boolean)) {
    if (!ALLOWED_CONFIG_KEYS.has(key.toLowerCase())) problems.push(`config key ${key} not allowed`);
  }

  if (input.fsck) {
    const fsck = await git(
      ['--git-dir', gitDir, 'fsck', '--connectivity-only', '--unreachable', '--no-reflogs', '--no-progress'],
      { allowFailure: true },
    );
    const unreachable = fsck.stdout.split('\n').filter((l) => l.startsWith('unreachable '));
    if (unreachable.length > 0) problems.push(`fsck: ${unreachable.length} unreachable object(s)`);
    if (fsck.code !== 0) problems.push(`fsck failed: ${fsck.stderr.trim().slice(0, 200)}`);
  }

  return { ok: problems.length === 0, foreignObjects, problems, objectCount: all.length };
}
