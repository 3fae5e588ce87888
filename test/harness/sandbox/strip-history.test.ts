import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stripHistory } from '../../../lib/harness/git/strip-history.ts';
import { restoreHistory } from '../../../lib/harness/git/restore-history.ts';
import { auditHistory } from '../../../lib/harness/git/audit-history.ts';
import { ANSWER, DANGLING, hashTree, makeHistoryRepo, readableObjects, type HistoryRepo } from './history-repo.ts';
import { gitResult } from '../../support/git-fixture.ts';

describe('strip / restore / audit history in place', () => {
  let work: string;
  let repo: HistoryRepo;
  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'fw-strip-'));
    repo = makeHistoryRepo(join(work, 'repo'));
  });
  afterEach(() => rmSync(work, { recursive: true, force: true }));

  it('leaves only the base tree and one synthetic commit, then restores .git byte for byte', async () => {
    const before = hashTree(join(repo.dir, '.git'));
    const vaultDir = join(work, 'vault');
    const stripped = await stripHistory({ repoDir: repo.dir, vaultDir, base: repo.base });

    const log = gitResult(repo.dir, ['log', '--all', '--format=%H %an %ad %s', '--date=raw']);
    expect(log.out.trim().split('\n')).toEqual([`${stripped.rootCommit} Flywheel 0 +0000 Task base`]);
    for (const sha of [repo.base, ...repo.later]) {
      expect(gitResult(repo.dir, ['cat-file', '-p', sha]).code).not.toBe(0);
    }
    expect(gitResult(repo.dir, ['show', repo.tag]).code).not.toBe(0);
    expect(gitResult(repo.dir, ['stash', 'list']).out).toBe('');
    expect(gitResult(repo.dir, ['notes', 'list']).out).toBe('');
    expect(gitResult(repo.dir, ['remote']).out).toBe('');
    expect(gitResult(repo.dir, ['reflog']).out).toBe('');
    expect(gitResult(repo.dir, ['status', '--porcelain']).out).toBe('');
    const everything = readableObjects(join(repo.dir, '.git'));
    expect(everything).not.toContain(ANSWER);
    expect(everything).not.toContain(DANGLING);
    expect(everything).toContain('return None  # TODO');
    const grep = spawnSync('grep', ['-r', '-a', ANSWER, join(repo.dir, '.git')]);
    expect(grep.status).toBe(1);

    const audit = await auditHistory({ ...stripped, fsck: true });
    expect(audit).toMatchObject({ ok: true, problems: [], foreignObjects: [] });
    expect(audit.objectCount).toBe(stripped.allowedObjects.size + 1);

    await restoreHistory({ repoDir: repo.dir, vaultDir });
    expect(hashTree(join(repo.dir, '.git'))).toBe(before);
    expect(gitResult(repo.dir, ['cat-file', '-p', repo.answerCommit]).code).toBe(0);
    expect((await restoreHistory({ repoDir: repo.dir, vaultDir })).restored).toBe(false);
  });

  it('fails the audit when a later object, ref, alternate or remote gets in', async () => {
    const vaultDir = join(work, 'vault');
    const stripped = await stripHistory({ repoDir: repo.dir, vaultDir, base: repo.base });
    const gitDir = join(repo.dir, '.git');
    // A later commit's blob written as a loose object.
    const blob = execFileSync('git', ['--git-dir', gitDir, 'hash-object', '-w', '--stdin'], { input: `${ANSWER}\n` })
      .toString()
      .trim();
    let audit = await auditHistory(stripped);
    expect(audit.ok).toBe(false);
    expect(audit.foreignObjects).toEqual([blob]);

    rmSync(join(gitDir, 'objects', blob.slice(0, 2)), { recursive: true });
    expect((await auditHistory(stripped)).ok).toBe(true);

    writeFileSync(join(gitDir, 'objects', 'info', 'alternates'), `${join(vaultDir, 'git', 'objects')}\n`);
    writeFileSync(join(gitDir, 'packed-refs'), `${repo.answerCommit} refs/tags/x\n`);
    mkdirSync(join(gitDir, 'hooks'), { recursive: true });
    writeFileSync(join(gitDir, 'hooks', 'post-checkout'), '#!/bin/sh\n');
    execFileSync('git', ['--git-dir', gitDir, 'config', 'remote.origin.url', 'https://example.com/x.git']);
    audit = await auditHistory(stripped);
    expect(audit.ok).toBe(false);
    expect(audit.foreignObjects.length).toBeGreaterThan(0);
    const text = audit.problems.join('\n');
    expect(text).toContain('objects/info/alternates must not exist');
    expect(text).toContain('packed-refs must not exist');
    expect(text).toContain('hooks present: post-checkout');
    expect(text).toContain('config key remote.origin.url not allowed');
    expect(text).toMatch(/refs must be exactly/);
    await restoreHistory({ repoDir: repo.dir, vaultDir });
  });
});
