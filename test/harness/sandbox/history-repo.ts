/**
 * Test fixture: a real git repository with a base commit and everything strict mode must hide: later commits (one
 * holds "the answer"), a tag, another branch, a stash, a note, a remote, reflog entries and a dangling object.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitSync } from '../../support/git-fixture.ts';

export const ANSWER = 'THE_ANSWER_IS_FORTY_TWO_7f3a';
export const DANGLING = 'DANGLING_SECRET_91c2';

export interface HistoryRepo {
  dir: string;
  base: string;
  later: string[];
  answerCommit: string;
  tag: string;
}

const g = gitSync;

export function makeHistoryRepo(dir: string): HistoryRepo {
  mkdirSync(join(dir, 'src'), { recursive: true });
  g(dir, ['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'src', 'calc.py'), 'def answer():\n    return None  # TODO\n');
  writeFileSync(join(dir, 'README.md'), '# calc\n');
  g(dir, ['add', '-A']);
  g(dir, ['commit', '-q', '-m', 'base']);
  const base = g(dir, ['rev-parse', 'HEAD']);
  writeFileSync(join(dir, 'src', 'calc.py'), `def answer():\n    return "${ANSWER}"\n`);
  g(dir, ['commit', '-q', '-am', 'fix: the answer']);
  const answerCommit = g(dir, ['rev-parse', 'HEAD']);
  writeFileSync(join(dir, 'CHANGELOG.md'), 'later\n');
  g(dir, ['add', '-A']);
  g(dir, ['commit', '-q', '-m', 'later']);
  const last = g(dir, ['rev-parse', 'HEAD']);
  g(dir, ['tag', '-a', 'v1.0', '-m', `release with ${ANSWER}`]);
  g(dir, ['branch', 'feature', answerCommit]);
  g(dir, ['notes', 'add', '-m', `note: ${ANSWER}`, base]);
  g(dir, ['remote', 'add', 'origin', 'https://github.com/example/calc.git']);
  g(dir, ['update-ref', 'refs/remotes/origin/main', last]);
  writeFileSync(join(dir, 'README.md'), `# calc\n${ANSWER} in a stash\n`);
  g(dir, ['stash', 'push', '-q', '-m', 'wip']);
  g(dir, ['hash-object', '-w', '--stdin'], `${DANGLING}\n`);
  g(dir, ['checkout', '-q', base]);
  g(dir, ['pack-refs', '--all']);
  g(dir, ['repack', '-q', '-a']);
  g(dir, ['hash-object', '-w', '--stdin'], `${DANGLING} loose\n`);
  return { dir, base, later: [answerCommit, last], answerCommit, tag: 'v1.0' };
}

/** A hash of a directory tree: every path, type, mode, size, mtime and byte of content. */
export function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string): void => {
    const abs = join(dir, rel);
    const st = lstatSync(abs, { bigint: true });
    h.update(`${rel}\0${st.mode}\0${st.size}\0${st.mtimeNs}\0`);
    if (st.isSymbolicLink()) h.update(readlinkSync(abs));
    else if (st.isDirectory()) for (const name of readdirSync(abs).sort()) walk(rel ? `${rel}/${name}` : name);
    else h.update(readFileSync(abs));
  };
  walk('');
  return h.digest('hex');
}

/** Every object's content the repository at `gitDir` can read, concatenated (decompressed by git). */
export function readableObjects(gitDir: string): string {
  return execFileSync('git', ['--git-dir', gitDir, 'cat-file', '--batch-all-objects', '--batch'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1' },
    maxBuffer: 1 << 28,
  }).toString('latin1');
}
