/**
 * The conformance suite every SandboxProvider must pass: isolation (the source and the rest of the host are out of
 * reach, the process tree is private), limits (wall clock kills the whole tree, output is cut), cleanup (close
 * removes the workspace, leaves no process behind, is idempotent) and the strict history audit (nothing of a later
 * commit is readable; lenient keeps the history). Call it from a *.test.ts file with a provider factory.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HarnessMode, SandboxProvider, SandboxSession, SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import { ANSWER, hashTree, makeHistoryRepo, type HistoryRepo } from '../sandbox/history-repo.ts';

/** Host processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmd.includes(marker)) found.push(Number(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export function describeSandboxConformance(
  name: string,
  makeProvider: () => SandboxProvider,
  modes: HarnessMode[] = ['strict', 'lenient'],
  /** Removes what the provider keeps (its cache); called after each mode's tests. */
  cleanup: () => void = () => undefined,
): void {
  describe.each(modes)(`${name} conformance (%s)`, (mode) => {
    let work: string;
    let repo: HistoryRepo;
    let provider: SandboxProvider;
    let gitHash: string;
    const spec = (over: Partial<SandboxSpec> = {}): SandboxSpec => ({
      sourceDir: repo.dir,
      baseCommit: repo.base,
      mode,
      networkAllowList: [],
      limits: { commandTimeoutMs: 10_000, outputBytes: 64 * 1024 },
      ...over,
    });

    beforeAll(() => {
      work = mkdtempSync(join(tmpdir(), 'fw-conf-'));
      repo = makeHistoryRepo(join(work, 'repo'));
      gitHash = hashTree(join(repo.dir, '.git'));
      provider = makeProvider();
    });
    afterAll(() => {
      rmSync(work, { recursive: true, force: true });
      cleanup();
    });

    const withSession = async (fn: (s: SandboxSession) => Promise<void>, over?: Partial<SandboxSpec>) => {
      const s = await provider.open(spec(over));
      try {
        await fn(s);
      } finally {
        await s.close();
      }
    };

    it('isolation: starts at the base files; the source repository cannot be read or written', async () => {
      await withSession(async (s) => {
        const files = await s.exec('cat src/calc.py');
        expect(files.stdout).toContain('return None  # TODO');
        const write = await s.exec(`echo x >> ${repo.dir}/README.md; rm -rf ${repo.dir}/.git/refs; echo done`);
        expect(write.stdout).toContain('done');
        const pids = await s.exec('ls /proc | grep -c "^[0-9]"');
        expect(Number(pids.stdout.trim())).toBeLessThan(10);
        const edit = await s.exec('echo changed > README.md && cat README.md');
        expect(edit.stdout).toBe('changed\n');
      });
      expect(readFileSync(join(repo.dir, 'README.md'), 'utf8')).toBe('# calc\n');
      expect(hashTree(join(repo.dir, '.git'))).toBe(gitHash);
    });

    it('limits: the wall clock kills the whole tree, a background grandchild included', async () => {
      const marker = `fwconf${Date.now()}`;
      await withSession(async (s) => {
        const r = await s.exec(`(sleep 4.${marker.length}; touch late-${marker}) & bash -c "exec -a ${marker} sleep 30"`, {
          timeoutMs: 800,
        });
        expect(r.limit).toBe('time');
        expect(r.durationMs).toBeLessThan(5000);
        expect(processesWith(marker)).toEqual([]);
        await new Promise((done) => setTimeout(done, 5000));
        expect(existsSync(join(s.workdir, `late-${marker}`))).toBe(false);
      });
    });

    it('limits: output past the cap is cut and flagged', async () => {
      await withSession(
        async (s) => {
          const r = await s.exec('head -c 100000 /dev/zero | tr "\\0" a');
          expect(r.truncated).toBe(true);
          expect(r.stdout.length).toBe(1000);
          expect(r.exitCode).toBe(0);
        },
        { limits: { commandTimeoutMs: 10_000, outputBytes: 1000 } },
      );
    });

    it('cleanup: close removes the workspace and every process, and is idempotent', async () => {
      const marker = `fwclean${Date.now()}`;
      const s = await provider.open(spec());
      const workdir = s.workdir;
      await s.exec(`bash -c "exec -a ${marker} sleep 30" & echo started`);
      expect(processesWith(marker)).toEqual([]);
      await s.close();
      await s.close();
      expect(existsSync(workdir)).toBe(false);
      await expect(s.exec('true')).rejects.toThrow();
    });

    it('diff: the agent changes against the base commit, new files included', async () => {
      await withSession(async (s) => {
        await s.exec('printf "def answer():\\n    return 42\\n" > src/calc.py && echo new > NEW.txt');
        const patch = await s.diff();
        expect(patch).toContain('+    return 42');
        expect(patch).toContain('diff --git a/NEW.txt b/NEW.txt');
        expect(patch).not.toContain('README');
      });
    });

    if (mode === 'strict') {
      it('history audit: no object of a later commit, tag, stash or note is readable', async () => {
        await withSession(async (s) => {
          const log = await s.exec('git log --all --oneline | wc -l');
          expect(log.stdout.trim()).toBe('1');
          for (const sha of repo.later) expect((await s.exec(`git cat-file -p ${sha}`)).exitCode).not.toBe(0);
          expect((await s.exec(`git show ${repo.tag}`)).exitCode).not.toBe(0);
          const all = await s.exec(`git cat-file --batch-all-objects --batch | grep -c ${ANSWER}; grep -ra ${ANSWER} .git; echo end`);
          expect(all.stdout).toBe('0\nend\n');
          expect(s.observations().some((o) => o.kind === 'git.history-needed')).toBe(true);
        });
      });
    } else {
      it('lenient keeps the history', async () => {
        await withSession(async (s) => {
          const r = await s.exec(`git show ${repo.answerCommit}:src/calc.py`);
          expect(r.stdout).toContain(ANSWER);
          expect(s.observations().some((o) => o.kind === 'git.history-needed' && o.detail.mode === 'lenient')).toBe(true);
        });
      });
    }
  });
}
