/**
 * `localSourceDir` (plan-shards' way to hand a folder suite's repositories to a job): a plain checkout or folder is
 * used in place (absolute), a bare repository or a `file://` URL is cloned into the sources cache with the commit
 * checked out (never the repository itself), a remote URL or a blob is not on this machine.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { localSourceDir } from '../../../lib/harness/eval/load-suite.ts';
import { parseTask } from '../../../lib/harness/task/task-schema.ts';

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } }).trim();
const task = (repo: object) => parseTask({ schemaVersion: 1, id: 'calc/add', suite: 's', split: 'held-out', visibility: 'private', repo, instruction: 'fix', testCommand: 'true', failToPass: ['t'] });

/** A checkout with two commits (`v1`, then `v2` of calc.txt) and its bare clone. */
function repos(): { work: string; bare: string; first: string } {
  root = mkdtempSync(join(tmpdir(), 'fw-local-source-'));
  const work = join(root, 'suite', 'work');
  mkdirSync(work, { recursive: true });
  git(work, 'init', '-q', '-b', 'main');
  writeFileSync(join(work, 'calc.txt'), 'v1\n');
  git(work, 'add', '.');
  git(work, 'commit', '-q', '-m', 'one');
  const first = git(work, 'rev-parse', 'HEAD');
  writeFileSync(join(work, 'calc.txt'), 'v2\n');
  git(work, 'commit', '-q', '-am', 'two');
  const bare = join(root, 'suite', 'bare.git');
  git(root, 'clone', '-q', '--bare', work, bare);
  return { work, bare, first };
}

describe('localSourceDir', () => {
  it('a plain checkout (local, or a git path) is used in place, by its absolute path', async () => {
    const { work, first } = repos();
    const taskFile = join(root, 'suite', 'calc.json');
    expect(await localSourceDir(task({ kind: 'local', path: 'work' }), taskFile)).toBe(work);
    expect(await localSourceDir(task({ kind: 'git', url: 'work', commit: first }), taskFile)).toBe(work);
  });

  it('a bare repository or a file:// URL is cloned into the cache at the commit, never used in place', async () => {
    const { bare, first } = repos();
    const cacheDir = join(root, 'cache');
    const taskFile = join(root, 'suite', 'calc.json');
    for (const repo of [{ kind: 'git', url: 'bare.git', commit: first }, { kind: 'git', url: pathToFileURL(bare).href, commit: first }]) {
      const dir = await localSourceDir(task(repo), taskFile, { cacheDir });
      expect(dir.startsWith(cacheDir)).toBe(true);
      expect(dir).not.toBe(bare);
      expect(readFileSync(join(dir, 'calc.txt'), 'utf8')).toBe('v1\n');
      expect(git(dir, 'rev-parse', 'HEAD')).toBe(first);
    }
    // A local bare repository: its HEAD, checked out in the cache.
    const local = await localSourceDir(task({ kind: 'local', path: 'bare.git' }), taskFile, { cacheDir });
    expect(local.startsWith(cacheDir)).toBe(true);
    expect(readFileSync(join(local, 'calc.txt'), 'utf8')).toBe('v2\n');
    expect(existsSync(join(bare, 'calc.txt'))).toBe(false);
  });

  it('a remote URL or a blob is not on this machine', async () => {
    root = mkdtempSync(join(tmpdir(), 'fw-local-source-'));
    await expect(localSourceDir(task({ kind: 'git', url: 'https://example.invalid/r.git', commit: 'abcdef1' }))).rejects.toThrow(/needs a repository on this machine.*https:\/\/example\.invalid/);
    await expect(localSourceDir(task({ kind: 'blob', key: 'forge/r.tar.gz' }))).rejects.toThrow(/blob forge\/r\.tar\.gz/);
  });
});
