/**
 * The conformance suite every SandboxProvider must pass: isolation by construction (nothing of the host exists inside
 * but the base system and the environment: no /etc/shadow, no other folders or clones, no /sys, a minimal /dev, a
 * read-only /proc/sys, an unprivileged uid outside, a seccomp filter, no harness variables), limits per attempt (wall
 * clock kills the whole tree, output is cut, processes, memory and disk are capped for the attempt as a whole),
 * network isolation (strict: no host unix socket, path or abstract, answers), cleanup (close removes the workspace,
 * leaves no process behind, is idempotent) and the strict history audit (nothing of a later commit is readable;
 * lenient keeps the history). Call it from a *.test.ts file with a provider factory.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENIED_SYSCALLS } from '../../../lib/harness/sandbox/seccomp-filter.ts';
import type { ExecResult, SandboxProvider, SandboxSession, SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import type { HarnessMode } from '../../../lib/harness/task/harness-mode.ts';
import { ANSWER, hashTree, makeHistoryRepo, type HistoryRepo } from '../sandbox/history-repo.ts';
import { waitFor } from '../../support/wait-for.ts';

/** Host processes whose argv[0] is `name` (not those that only mention it, like the sandbox's own launcher). */
export function processesNamed(name: string): number[] {
  return processesWith(name).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === name;
    } catch {
      return false;
    }
  });
}

/** A shell command that runs the Python program `source` (passed base64-encoded: no quoting to get wrong). */
export function python(source: string): string {
  return `python3 -c "$(echo ${Buffer.from(source).toString('base64')} | base64 -d)"`;
}

/** Runs a process named `marker` in the sandbox and hands its host pid to `inspect` while it runs. */
export async function whileRunning<T>(session: SandboxSession, marker: string, inspect: (pid: number) => T): Promise<{ seen: T; result: ExecResult }> {
  const running = session.exec(`exec -a ${marker} sleep 60`);
  const pid = await waitFor(() => processesNamed(marker)[0], { what: `a sandboxed process named ${marker}`, timeoutMs: 30_000, everyMs: 20 });
  const seen = inspect(pid);
  process.kill(pid, 'SIGKILL');
  return { seen, result: await running };
}

/** The /dev entries a minimal sandbox may hold (bubblewrap's --dev); null, zero, random, urandom and tty must be there. */
const DEV_ALLOWED = new Set(['core', 'fd', 'full', 'null', 'ptmx', 'pts', 'random', 'shm', 'stderr', 'stdin', 'stdout', 'tty', 'urandom', 'zero']);
/** What a sandbox's /etc may hold. */
const ETC_ALLOWED = new Set(['passwd', 'group', 'hosts', 'resolv.conf', 'nsswitch.conf', 'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'alternatives', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'localtime']);

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
    /** Host paths outside the workspace that must not exist inside: a marker folder and a second clone of the task repository. */
    let marker: string;
    let clone: string;
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
      marker = mkdtempSync('/var/tmp/fw-conf-marker-');
      writeFileSync(join(marker, 'secret.txt'), 'host secret\n');
      clone = join(mkdtempSync('/var/tmp/fw-conf-clone-'), 'repo');
      execFileSync('git', ['clone', '-q', repo.dir, clone]);
      provider = makeProvider();
    });
    afterAll(() => {
      rmSync(work, { recursive: true, force: true });
      rmSync(marker, { recursive: true, force: true });
      rmSync(join(clone, '..'), { recursive: true, force: true });
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

    it('isolation: nothing of the host outside the allow-list exists (shadow, other folders, a second clone, /sys)', async () => {
      await withSession(async (s) => {
        const etc = (await s.exec('ls -A /etc')).stdout.trim().split('\n');
        for (const name of etc) expect(ETC_ALLOWED.has(name), `/etc/${name}`).toBe(true);
        for (const path of ['/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/ssh', '/etc/ssl/private', marker, join(marker, 'secret.txt'), clone, '/sys', '/var', '/srv', '/home']) {
          expect((await s.exec(`test -e ${path} && echo visible || echo absent`)).stdout, path).toBe('absent\n');
        }
        expect((await s.exec(`cat ${marker}/secret.txt`)).exitCode).not.toBe(0);
        expect((await s.exec(`git -C ${clone} log --oneline`)).exitCode).not.toBe(0);
        // The root holds the base system, the workspace's path, /tmp, /proc and /dev, and what environments bind.
        const root = (await s.exec('ls -A /')).stdout.trim().split('\n');
        for (const name of ['etc', 'usr', 'tmp', 'proc', 'dev']) expect(root).toContain(name);
        for (const name of ['sys', 'var', 'srv', 'home', 'boot', 'mnt']) expect(root).not.toContain(name);
        // Writable: the workspace and /tmp. The base system and the root itself are not.
        for (const path of ['/fw-new-file', '/etc/fw-new-file', '/usr/fw-new-file']) {
          expect((await s.exec(`touch ${path}`)).stderr, path).toMatch(/Read-only file system|Permission denied/);
        }
        expect((await s.exec('touch /tmp/fw-ok ./fw-ok && echo ok && rm ./fw-ok')).stdout).toBe('ok\n');
      });
    });

    it('isolation: the sandbox root and other attempts are out of reach', async () => {
      const other = await provider.open(spec());
      try {
        await withSession(async (s) => {
          const own = s.workdir.split('/').at(-2)!;
          const otherId = other.workdir.split('/').at(-2)!;
          const attempts = s.workdir.split('/').slice(0, -2).join('/');
          expect((await s.exec(`ls -A ${attempts}`)).stdout).toBe(`${own}\n`);
          expect((await s.exec(`ls -A ${join(attempts, '..')}`)).stdout).toBe(`${attempts.split('/').at(-1)}\n`);
          expect((await s.exec(`test -e ${other.workdir} && echo visible || echo absent`)).stdout).toBe('absent\n');
          expect(otherId).not.toBe(own);
        });
      } finally {
        await other.close();
      }
    });

    it('isolation: an unprivileged uid outside, /proc/sys read-only, a minimal /dev of its own', async () => {
      await withSession(async (s) => {
        const map = (await s.exec('cat /proc/self/uid_map')).stdout.trim().split('\n');
        expect(map).toHaveLength(1);
        expect(map[0]!.trim().split(/\s+/)[2]).toBe('1');
        const mark = `fwuid${process.pid}${Date.now()}`;
        const { seen } = await whileRunning(s, mark, (pid) => ({
          status: readFileSync(`/proc/${pid}/status`, 'utf8'),
          uidMap: readFileSync(`/proc/${pid}/uid_map`, 'utf8'),
          gidMap: readFileSync(`/proc/${pid}/gid_map`, 'utf8'),
        }));
        // Seen from the host: every uid of the process is unprivileged, and no range of its maps reaches id 0 outside.
        const uids = /^Uid:\s+(.*)$/m.exec(seen.status)![1]!.trim().split(/\s+/).map(Number);
        for (const uid of uids) expect(uid).toBeGreaterThan(0);
        for (const line of `${seen.uidMap}${seen.gidMap}`.trim().split('\n')) {
          const [, outside, count] = line.trim().split(/\s+/).map(Number) as [number, number, number];
          expect(outside > 0 || outside + count <= 0, line).toBe(true);
        }
        expect(/^CapEff:\s+(\S+)$/m.exec(seen.status)![1]).toMatch(/^0+$/);
        expect(/^Seccomp:\s+(\d)$/m.exec(seen.status)![1]).toBe('2');
        expect(/^NoNewPrivs:\s+(\d)$/m.exec(seen.status)![1]).toBe('1');

        const core = await s.exec('echo "|/tmp/evil" > /proc/sys/kernel/core_pattern');
        expect(core.exitCode).not.toBe(0);
        expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).not.toContain('/tmp/evil');
        expect((await s.exec('ls /proc | grep -c "^[0-9]"')).stdout.trim()).toMatch(/^[1-9]$/);

        const dev = (await s.exec('ls -A /dev')).stdout.trim().split('\n');
        for (const name of dev) expect(DEV_ALLOWED.has(name), `/dev/${name}`).toBe(true);
        for (const name of ['null', 'zero', 'random', 'urandom', 'tty']) expect(dev).toContain(name);
        expect((await s.exec('head -c 4 /dev/urandom | wc -c; head -c 3 /dev/zero | wc -c; echo x > /dev/null && echo ok')).stdout).toBe('4\n3\nok\n');
        const devMarker = `fw-dev-${process.pid}-${Date.now()}`;
        await s.exec(`touch /dev/${devMarker}; mknod /dev/${devMarker}-sda b 8 0`);
        expect(existsSync(`/dev/${devMarker}`)).toBe(false);
        expect(existsSync(`/dev/${devMarker}-sda`)).toBe(false);
      });
    });

    it('isolation: mount, unshare, keyctl, bpf, ptrace and the rest of the seccomp list fail with EPERM; clone3 with ENOSYS', async () => {
      const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
      const denied = Object.entries(DENIED_SYSCALLS).flatMap(([name, nr]) => (nr[arch] === undefined ? [] : [[name, nr[arch]!, 0] as const]));
      const CLONE_NEWUSER = 0x10000000;
      const extra = [
        ['unshare(CLONE_NEWUSER)', DENIED_SYSCALLS.unshare![arch]!, CLONE_NEWUSER],
        ['clone(CLONE_NEWUSER)', arch === 'x86_64' ? 56 : 220, CLONE_NEWUSER],
        ['clone3', 435, 0],
        ...(arch === 'x86_64' ? [['x32 getpid', 0x40000000 + 39, 0] as const] : []),
      ] as const;
      await withSession(async (s) => {
        const script = `import ctypes, errno, json\nlibc = ctypes.CDLL(None, use_errno=True)\nout = {}\nfor name, nr, arg in ${JSON.stringify([...denied, ...extra])}:\n    ctypes.set_errno(0)\n    r = libc.syscall(nr, arg, 0, 0, 0, 0)\n    out[name] = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno())) if r == -1 else 'ok'\nprint(json.dumps(out))\n`;
        const r = await s.exec(python(script));
        expect(r.exitCode, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toEqual({
          ...Object.fromEntries(denied.map(([name]) => [name, 'EPERM'])),
          'unshare(CLONE_NEWUSER)': 'EPERM',
          'clone(CLONE_NEWUSER)': 'EPERM',
          clone3: 'ENOSYS',
          ...(arch === 'x86_64' ? { 'x32 getpid': 'EPERM' } : {}),
        });
        for (const name of ['mount', 'umount2', 'unshare', 'keyctl', 'bpf', 'ptrace']) expect(denied.map(([n]) => n)).toContain(name);
        const tools = await s.exec('unshare -U true; echo "unshare=$?"; unshare -m true; echo "unshare-m=$?"; mount -t tmpfs none /tmp 2>&1; echo "mount=$?"');
        expect(tools.stdout).toMatch(/unshare=1\nunshare-m=1\n[\s\S]*mount=(1|32)\n/);
        // Threads and child processes (clone without namespace flags, after glibc's clone3 fallback) still work.
        expect((await s.exec(python('import threading, subprocess\nt = threading.Thread(target=print, args=("thread",)); t.start(); t.join()\nprint(subprocess.run(["echo", "child"], capture_output=True, text=True).stdout.strip())\n'))).stdout).toBe('thread\nchild\n');
      });
    });

    it('isolation: the environment holds only the sandbox\'s own variables (no FW_*, no host paths of the sandbox root)', async () => {
      await withSession(async (s) => {
        const env = (await s.exec('env -0')).stdout.split('\0').filter(Boolean);
        const names = env.map((l) => l.slice(0, l.indexOf('=')));
        expect(names.filter((n) => n.startsWith('FW_'))).toEqual([]);
        const root = s.workdir.split('/').slice(0, -3).join('/');
        // The workspace's own path is where commands run (PWD); nothing else names the sandbox root.
        expect(env.filter((l) => l.includes(root) && !/^(PWD|OLDPWD)=/.test(l))).toEqual([]);
        for (const name of ['HOME', 'PATH', 'TMPDIR']) expect(names).toContain(name);
        expect(names).not.toContain('NODE_OPTIONS');
      }, { env: { TASK_VAR: 'kept' } });
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
      it('limits: a fork bomb is stopped at the attempt\'s process limit (processes); the host is unaffected', async () => {
        const mark = `fwbomb${process.pid}${Date.now()}`;
        await withSession(
          async (s) => {
            // Every process forks another and waits for it: the tree only grows until something stops it.
            const r = await s.exec(`exec -a ${mark} bash -c 'bomb() { bomb & bomb; wait; }; bomb'`);
            expect(r.limit).toBe('processes');
            expect(execFileSync('sh', ['-c', 'echo host-ok']).toString()).toBe('host-ok\n');
            await waitFor(() => (processesWith(mark).length === 0 ? true : undefined), { what: 'the fork bomb to be gone', timeoutMs: 30_000, everyMs: 20 });
            // The next command starts normally: the limit is the attempt's, and the bomb's processes are gone.
            expect((await s.exec('echo fine')).stdout).toBe('fine\n');
          },
          { limits: { commandTimeoutMs: 60_000, outputBytes: 64 * 1024, processes: 64 } },
        );
      }, 90_000);

      it('limits: processes each under the memory limit but together over it are killed (memory)', async () => {
        await withSession(
          async (s) => {
            // Four processes of ~100 MB each, under a 256 MB limit for the attempt: they start together (a barrier:
            // each waits until all four hold their memory or one of them died), so the group must go over.
            const holder = 'import os, sys, time\nx = b"a" * (100 << 20)\nopen("/tmp/mem/" + sys.argv[1], "w").close()\nwhile not os.path.exists("/tmp/mem/go"):\n    time.sleep(0.02)\n';
            const script = [
              'mkdir -p /tmp/mem && rm -f /tmp/mem/*',
              `echo ${Buffer.from(holder).toString('base64')} | base64 -d > /tmp/hold.py`,
              'for i in 1 2 3 4; do python3 /tmp/hold.py $i & done',
              'while [ "$(ls /tmp/mem | wc -l)" -lt 4 ] && [ "$(jobs -rp | wc -l)" -eq 4 ]; do sleep 0.02; done',
              'touch /tmp/mem/go; wait; echo done',
            ].join('\n');
            const r = await s.exec(script);
            expect(r.limit, r.stderr).toBe('memory');
            expect(r.stdout).toContain('done');
            expect((await s.exec('echo fine')).limit).toBeUndefined();
          },
          { limits: { commandTimeoutMs: 60_000, outputBytes: 64 * 1024, memoryBytes: 256 * 1024 * 1024 } },
        );
      }, 90_000);

      it('limits: filling the workspace or /tmp stops at the attempt\'s disk cap (disk)', async () => {
        await withSession(
          async (s) => {
            const ws = await s.exec('head -c 100000000 /dev/zero > fill.bin');
            expect(ws.exitCode).not.toBe(0);
            expect(ws.stderr).toMatch(/No space left on device/);
            expect(ws.limit).toBe('disk');
            expect(Number((await s.exec('stat -c %s fill.bin')).stdout)).toBeLessThanOrEqual(32 * 1024 * 1024);
            expect((await s.exec('rm fill.bin && echo ok > small.txt && cat small.txt')).stdout).toBe('ok\n');
            const tmp = await s.exec('head -c 100000000 /dev/zero > /tmp/fill.bin');
            expect(tmp.limit).toBe('disk');
            expect(Number((await s.exec('stat -c %s /tmp/fill.bin')).stdout)).toBeLessThanOrEqual(32 * 1024 * 1024);
          },
          { limits: { commandTimeoutMs: 60_000, outputBytes: 64 * 1024, diskBytes: 32 * 1024 * 1024 } },
        );
      }, 90_000);

      it('network: a host unix socket, in a host folder or abstract, cannot be reached', async () => {
        const dir = mkdtempSync('/var/tmp/fw-conf-sock-');
        const path = join(dir, 'host.sock');
        const abstract = `\0fw-conf-${process.pid}-${Date.now()}`;
        let connections = 0;
        const listen = (where: string) =>
          new Promise<Server>((done) => {
            const server = createServer((c) => {
              connections++;
              c.end('host answered\n');
            });
            server.listen(where, () => done(server));
          });
        const servers = [await listen(path), await listen(abstract)];
        // Both answer on the host (so a refusal inside is the sandbox's doing).
        for (const where of [path, abstract]) {
          await new Promise<void>((done, fail) => {
            const client = connect(where, () => {
              client.end();
              done();
            });
            client.on('error', fail);
          });
        }
        await waitFor(() => (connections === 2 ? true : undefined), { what: 'the host connections', timeoutMs: 30_000, everyMs: 20 });
        connections = 0;
        try {
          await withSession(async (s) => {
            const script = `import socket\nfor addr in [${JSON.stringify(path)}, ${JSON.stringify(abstract)}]:\n    c = socket.socket(socket.AF_UNIX)\n    try:\n        c.connect(addr); print('connected', c.recv(64))\n    except OSError as e:\n        print('refused', e.errno)\n`;
            const r = await s.exec(python(script));
            expect(r.exitCode, r.stderr).toBe(0);
            expect(r.stdout).not.toContain('connected');
            expect(r.stdout.trim().split('\n')).toHaveLength(2);
          });
          expect(connections).toBe(0);
        } finally {
          for (const server of servers) server.close();
          rmSync(dir, { recursive: true, force: true });
        }
      });

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
