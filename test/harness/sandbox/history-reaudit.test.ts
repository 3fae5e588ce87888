import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import type { SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import { ANSWER, makeHistoryRepo, type HistoryRepo } from './history-repo.ts';
import type { HarnessMode } from '../../../lib/harness/task/harness-mode.ts';

/** Git on the host against a repository the test controls (the leak the re-audit must catch). */
function hostGit(gitDir: string, args: string[], input?: Buffer): Buffer {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { input, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1' } });
}

describe.each(['overlay', 'copy'] as const)('post-attempt history re-audit (namespace sandbox, %s workspace)', (workspace) => {
  let work: string;
  let repo: HistoryRepo;
  let provider: NamespaceSandboxProvider;
  const spec = (mode: HarnessMode): SandboxSpec => ({
    sourceDir: repo.dir,
    baseCommit: repo.base,
    mode,
    networkAllowList: [],
    limits: { commandTimeoutMs: 20_000, outputBytes: 64 * 1024 },
  });

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'fw-reaudit-'));
    repo = makeHistoryRepo(join(work, 'repo'));
    provider = new NamespaceSandboxProvider({ root: join(work, 'sb'), workspace });
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('objects the agent made (an edit committed) are new but recover nothing: ok', async () => {
    const session = await provider.open(spec('strict'));
    try {
      const r = await session.exec('echo "# more" >> README.md && git -c user.name=a -c user.email=a@b commit -qam "agent commit" && git log --oneline | wc -l');
      expect(r.exitCode).toBe(0);
      expect(r.stdout.trim()).toBe('2');
      const audit = await session.reaudit();
      expect(audit).toMatchObject({ ok: true, recoveredHistory: [], problems: [], method: workspace === 'overlay' ? 'upper-layer' : 'full-listing' });
      // A blob, a tree and a commit of the agent's.
      expect(audit!.newObjects).toBeGreaterThanOrEqual(3);
    } finally {
      await session.close();
    }
  });

  it('a commit of the task history that appears in the workspace is caught and named; equal later content is counted apart', async () => {
    const session = await provider.open(spec('strict'));
    try {
      const source = join(repo.dir, '.git');
      const ws = join(session.workdir, '.git');
      hostGit(ws, ['hash-object', '-t', 'commit', '-w', '--stdin', '--literally'], hostGit(source, ['cat-file', 'commit', repo.answerCommit]));
      const answerBlob = hostGit(source, ['rev-parse', `${repo.answerCommit}:src/calc.py`]).toString().trim();
      hostGit(ws, ['hash-object', '-w', '--stdin'], hostGit(source, ['cat-file', 'blob', answerBlob]));
      const audit = await session.reaudit();
      expect(audit!.ok).toBe(false);
      expect(audit!.recoveredHistory).toEqual([repo.answerCommit]);
      expect(audit!.method).toBe(workspace === 'overlay' ? 'upper-layer' : 'full-listing');
      expect(audit!.matchingLaterContent).toBe(1);
      expect(audit!.problems.join('\n')).toMatch(/1 commit\/tag object\(s\) of the task's history readable after the attempt/);
      // The agent can read it now: that is what the audit reports.
      expect((await session.exec(`git cat-file -p ${answerBlob}`)).stdout).toContain(ANSWER);
    } finally {
      await session.close();
    }
  });

  it('an alternates file is reported; a deleted repository cannot be audited and says so', async () => {
    const session = await provider.open(spec('strict'));
    try {
      writeFileSync(join(session.workdir, '.git', 'objects', 'info', 'alternates'), '/nowhere/objects\n');
      const audit = await session.reaudit();
      expect(audit!.ok).toBe(false);
      expect(audit!.problems).toContain('objects/info/alternates present: the repository reads objects from elsewhere');
      // An alternates file changes where objects come from: the full listing decides, whatever the workspace.
      expect(audit!.method).toBe('full-listing');
      await session.exec('rm -rf .git');
      const gone = await session.reaudit();
      expect(gone!.ok).toBe(false);
      expect(gone!.problems[0]).toMatch(/cannot list the workspace repository's objects/);
    } finally {
      await session.close();
    }
  });

  it('a multi-pack index written by the agent sends the re-audit to the full listing, which still finds a recovered commit', async () => {
    const session = await provider.open(spec('strict'));
    try {
      const commit = hostGit(join(repo.dir, '.git'), ['cat-file', 'commit', repo.answerCommit]);
      const w = await session.exec('git hash-object -t commit -w --stdin --literally && git repack -q && git multi-pack-index write', { stdin: commit.toString('latin1') });
      expect(w.exitCode).toBe(0);
      const audit = await session.reaudit();
      expect(audit).toMatchObject({ ok: false, recoveredHistory: [repo.answerCommit], method: 'full-listing' });
    } finally {
      await session.close();
    }
  });

  it('objects reached through a symlinked objects folder are found (the fast path steps aside)', async () => {
    const session = await provider.open(spec('strict'));
    try {
      const source = join(repo.dir, '.git');
      // The agent moves the object store to /tmp and links it back, then an answer object appears there.
      const r = await session.exec('mv .git/objects /tmp/objs && ln -s /tmp/objs .git/objects && git cat-file -t HEAD');
      expect(r.stdout.trim()).toBe('commit');
      const commit = hostGit(source, ['cat-file', 'commit', repo.answerCommit]);
      const w = await session.exec('git hash-object -t commit -w --stdin --literally', { stdin: commit.toString('latin1') });
      expect(w.stdout.trim()).toBe(repo.answerCommit);
      const audit = await session.reaudit();
      expect(audit).toMatchObject({ ok: false, recoveredHistory: [repo.answerCommit], method: 'full-listing' });
    } finally {
      await session.close();
    }
  });

  it('lenient mode has no re-audit (the history is there by design)', async () => {
    const session = await provider.open(spec('lenient'));
    try {
      expect(await session.reaudit()).toBeUndefined();
    } finally {
      await session.close();
    }
  });
});
