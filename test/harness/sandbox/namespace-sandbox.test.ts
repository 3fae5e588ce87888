import { createServer, type Server } from 'node:http';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, NamespaceSandboxProvider, SandboxSetupError } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import type { SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import { processesWith, whileRunning } from '../conformance/sandbox.conformance.ts';
import { ANSWER, hashTree, makeHistoryRepo, type HistoryRepo } from './history-repo.ts';

function listen(body: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((_req, res) => res.end(body));
    server.listen(0, '127.0.0.1', () => {
      const a = server.address();
      resolve({ server, port: typeof a === 'object' && a ? a.port : 0 });
    });
  });
}

describe('namespace sandbox', () => {
  let work: string;
  let repo: HistoryRepo;
  let provider: NamespaceSandboxProvider;
  let allowed: { server: Server; port: number };
  let blocked: { server: Server; port: number };
  let hits = { allowed: 0, blocked: 0 };
  const spec = (over: Partial<SandboxSpec> = {}): SandboxSpec => ({
    sourceDir: repo.dir,
    baseCommit: repo.base,
    mode: 'strict',
    networkAllowList: [`127.0.0.1:${allowed.port}`],
    limits: { commandTimeoutMs: 15_000, outputBytes: 256 * 1024 },
    ...over,
  });

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'fw-ns-'));
    repo = makeHistoryRepo(join(work, 'repo'));
    provider = new NamespaceSandboxProvider({ root: join(work, 'sandboxes') });
    allowed = await listen('allowed-answer');
    blocked = await listen('blocked-answer');
    allowed.server.on('request', () => hits.allowed++);
    blocked.server.on('request', () => hits.blocked++);
  });
  afterAll(() => {
    allowed.server.close();
    blocked.server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('strict: git shows only the synthetic root; later commits, tags and the answer are unreadable; source unchanged', async () => {
    const before = hashTree(repo.dir);
    const s = await provider.open(spec());
    try {
      const log = await s.exec('git log --all --format="%an %ad %s" --date=raw');
      expect(log.stdout).toBe('Flywheel 0 +0000 Task base\n');
      expect((await s.exec(`git cat-file -p ${repo.answerCommit}`)).stderr).toMatch(/not a valid object name|fatal/);
      expect((await s.exec(`git show ${repo.tag}`)).exitCode).not.toBe(0);
      expect((await s.exec('git stash list; git notes list; git remote; git reflog; git tag; git branch -a')).stdout).toBe(
        '* main\n',
      );
      expect((await s.exec(`grep -ra ${ANSWER} .git; echo $?`)).stdout).toBe('1\n');
      expect((await s.exec('git status --porcelain')).stdout).toBe('');
      // The real .git is out of reach: the source directory and the sandbox root (layer cache, other attempts) do not
      // exist inside; only the path down to this workspace is there.
      const source = await s.exec(`ls -A ${repo.dir}`);
      expect(source.stdout).toBe('');
      expect(source.stderr).toMatch(/No such file or directory/);
      expect((await s.exec(`ls -A ${provider.root}; ls -A ${provider.attemptsDir}`)).stdout).toBe(
        `attempts\n${s.workdir.split('/').at(-2)}\n`,
      );
      expect((await s.exec(`git --git-dir=${repo.dir}/.git log`)).exitCode).not.toBe(0);
      // No capabilities, and mount(2) refused: nothing can be mounted or lifted.
      expect((await s.exec(`umount ${s.workdir} 2>&1; grep CapEff /proc/self/status`)).stdout).toMatch(/CapEff:\s+0+\n/);
      const kinds = s.observations().map((o) => o.kind);
      expect(kinds).toContain('git.history-needed');
      expect(kinds).toContain('read.outside-workspace');
      const cheat = s.observations().find((o) => o.kind === 'git.history-needed' && String(o.detail.argv).includes(repo.answerCommit));
      expect(cheat?.detail).toMatchObject({ failed: true, mode: 'strict' });
    } finally {
      await s.close();
    }
    expect(hashTree(repo.dir)).toBe(before);
  });

  it('strict network: an allowed loopback server answers through the proxy, another is unreachable; both are logged', async () => {
    hits = { allowed: 0, blocked: 0 };
    const s = await provider.open(spec());
    try {
      const ok = await s.exec(`curl -sS -m 5 http://127.0.0.1:${allowed.port}/`);
      expect(ok.stdout).toBe('allowed-answer');
      const denied = await s.exec(`curl -sS -m 5 -f http://127.0.0.1:${blocked.port}/`);
      expect(denied.exitCode).not.toBe(0);
      const direct = await s.exec(`curl -sS -m 5 --noproxy '*' http://127.0.0.1:${blocked.port}/`);
      expect(direct.exitCode).not.toBe(0);
      expect(direct.stderr).toMatch(/Couldn't connect|Connection refused|Failed to connect/);
      const tunnel = await s.exec(`curl -sS -m 5 -p -f http://127.0.0.1:${blocked.port}/`);
      expect(tunnel.exitCode).not.toBe(0);
      const obs = s.observations().filter((o) => o.kind.startsWith('network.'));
      expect(obs.map((o) => [o.kind, o.detail.port, o.detail.method])).toEqual([
        ['network.allowed', allowed.port, 'GET'],
        ['network.blocked', blocked.port, 'GET'],
        ['network.blocked', blocked.port, 'CONNECT'],
      ]);
      expect(hits).toEqual({ allowed: 1, blocked: 0 });
    } finally {
      await s.close();
    }
  });

  it('lenient: full history, any host through the proxy, but never the host itself', async () => {
    // Lenient mode allows every host (`*`), yet runs in its own network namespace: the host's loopback services are
    // host-only addresses the proxy refuses unless the task's list names them literally, as it names this one.
    const s = await provider.open(spec({ mode: 'lenient', networkAllowList: [`127.0.0.1:${allowed.port}`] }));
    try {
      expect((await s.exec(`curl -sS -m 5 --proxy "$HTTP_PROXY" http://127.0.0.1:${allowed.port}/`)).stdout).toBe('allowed-answer');
      const direct = await s.exec(`curl -sS -m 5 --noproxy '*' http://127.0.0.1:${blocked.port}/`);
      expect(direct.exitCode).not.toBe(0);
      const viaProxy = await s.exec(`curl -sS -m 5 --proxy "$HTTP_PROXY" -o /dev/null -w '%{http_code}' http://127.0.0.1:${blocked.port}/`);
      expect(viaProxy.stdout).toBe('403');
      expect(s.observations()).toEqual(
        expect.arrayContaining([expect.objectContaining({ kind: 'network.blocked', detail: expect.objectContaining({ port: blocked.port }) })]),
      );
      expect((await s.exec(`git show ${repo.tag} | grep -c ${ANSWER}`)).stdout.trim()).not.toBe('0');
    } finally {
      await s.close();
    }
  });

  it('limits: cpu seconds, memory, output runaway and cwd', async () => {
    // The CPU limit counts CPU seconds, not wall time; the command timeout is only an upper bound, far enough that a
    // busy machine (where one CPU second takes many wall seconds) cannot end the loop first.
    const spinning = await provider.open(spec({ limits: { commandTimeoutMs: 60_000, outputBytes: 4096, cpuSeconds: 1 } }));
    try {
      const cpu = await spinning.exec('while :; do :; done');
      expect(cpu.limit).toBe('cpu');
      expect(cpu.signal).toBe('SIGXCPU');
    } finally {
      await spinning.close();
    }
    // A CPU budget the allocation cannot reach first, even when page faults and reclaim are slow on a loaded
    // machine: the attempt's memory limit, not the CPU limit, ends it.
    const s = await provider.open(
      spec({ limits: { commandTimeoutMs: 60_000, outputBytes: 4096, cpuSeconds: 3600, memoryBytes: 256 * 1024 * 1024 } }),
    );
    try {
      const mem = await s.exec(`python3 -c "x = b'a' * (400 << 20); print(len(x))"`);
      expect(mem.limit).toBe('memory');
      const runaway = await s.exec('yes');
      expect(runaway).toMatchObject({ limit: 'output', truncated: true });
      expect(runaway.stdout.length).toBe(4096);
      const fine = await s.exec('echo ok');
      expect(fine).toMatchObject({ exitCode: 0, stdout: 'ok\n', truncated: false, limit: undefined });
      await expect(s.exec('true', { cwd: '..' })).rejects.toThrow(/outside the workspace/);
      expect((await s.exec('pwd', { cwd: 'src' })).stdout).toBe(`${s.workdir}/src\n`);
    } finally {
      await s.close();
    }
  }, 150_000);

  it('runs as the sandbox uid, mapped to itself and nothing else; the attempt\'s cgroup holds its commands and goes at close', async () => {
    const s = await provider.open(spec());
    const attemptDir = join(s.workdir, '..');
    const cgroups = readFileSync(join(attemptDir, 'cgroups'), 'utf8').trim().split('\n');
    try {
      const { uid, gid } = provider.user;
      expect((await s.exec('id -u; id -g; id -G; id -un')).stdout).toBe(`${uid}\n${gid}\n${gid}\nflywheel\n`);
      const mark = `fwns${process.pid}${Date.now()}`;
      const { seen } = await whileRunning(s, mark, (pid) => ({
        uidMap: readFileSync(`/proc/${pid}/uid_map`, 'utf8').trim().split(/\s+/),
        status: readFileSync(`/proc/${pid}/status`, 'utf8'),
        cgroup: readFileSync(`/proc/${pid}/cgroup`, 'utf8'),
      }));
      // Seen from the host: one uid, the sandbox's, mapped to itself; the process is in the attempt's groups.
      expect(seen.uidMap).toEqual([String(uid), String(uid), '1']);
      expect(/^Uid:\s+(.*)$/m.exec(seen.status)![1]!.split(/\s+/)).toEqual([String(uid), String(uid), String(uid), String(uid)]);
      for (const dir of cgroups) expect(seen.cgroup).toContain(dir.split('/').at(-1));
      for (const dir of cgroups) expect(existsSync(dir)).toBe(true);
      // The attempt's limits, with the defaults: 4 GiB of memory, 512 processes, 2 CPUs of bandwidth.
      const read = (file: string) => cgroups.map((d) => join(d, file)).filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8').trim())[0];
      expect(read('memory.limit_in_bytes') ?? read('memory.max')).toBe(String(DEFAULT_LIMITS.memoryBytes));
      expect(read('pids.max')).toBe(String(DEFAULT_LIMITS.processes));
      expect(read('cpu.cfs_quota_us') ?? read('cpu.max')?.split(' ')[0]).toBe(String(DEFAULT_LIMITS.cpus * 100_000));
    } finally {
      await s.close();
    }
    for (const dir of cgroups) expect(existsSync(dir)).toBe(false);
  });

  it('an environment: read-only binds with masks, workspace binds outside the diff, its PATH and variables; every git is the shim', async () => {
    const tool = join(work, 'toolchain');
    mkdirSync(join(tool, 'bin'), { recursive: true });
    mkdirSync(join(tool, 'lib', 'packages'), { recursive: true });
    writeFileSync(join(tool, 'lib', 'packages', 'host_only.py'), 'SECRET = 1\n');
    writeFileSync(join(tool, 'bin', 'fw-tool'), '#!/bin/sh\necho "tool at $TOOL_HOME"\n');
    writeFileSync(join(tool, 'bin', 'git'), '#!/bin/sh\necho FAKE GIT\n');
    for (const f of ['fw-tool', 'git']) chmodSync(join(tool, 'bin', f), 0o755);
    const modules = join(work, 'modules');
    mkdirSync(join(modules, 'pkg'), { recursive: true });
    writeFileSync(join(modules, 'pkg', 'index.js'), 'module.exports = 42;\n');
    const output = join(work, 'output');
    mkdirSync(output, { recursive: true });
    const s = await provider.open(
      spec({
        environment: {
          id: 'test-env',
          binds: [{ source: tool, target: '/opt/fw-test-tool' }],
          masks: ['/opt/fw-test-tool/lib/packages'],
          workspaceBinds: [{ source: modules, path: 'node_modules' }],
          pathDirs: ['/opt/fw-test-tool/bin'],
          env: { TOOL_HOME: '/opt/fw-test-tool' },
        },
        outputBinds: [{ source: output, target: '/opt/fw-test-out' }],
      }),
    );
    try {
      expect((await s.exec('fw-tool')).stdout).toBe('tool at /opt/fw-test-tool\n');
      expect((await s.exec('echo "$PATH"')).stdout).toMatch(/^\/opt\/fw-test-tool\/bin:/);
      expect((await s.exec('ls -A /opt/fw-test-tool/lib/packages | wc -l')).stdout).toBe('0\n');
      expect((await s.exec('touch /opt/fw-test-tool/x')).stderr).toMatch(/Read-only file system/);
      expect((await s.exec('cat node_modules/pkg/index.js')).stdout).toBe('module.exports = 42;\n');
      expect((await s.exec('touch node_modules/pkg/x')).stderr).toMatch(/Read-only file system/);
      expect((await s.exec('echo built > /opt/fw-test-out/result && echo ok')).stdout).toBe('ok\n');
      expect(readFileSync(join(output, 'result'), 'utf8')).toBe('built\n');
      // The git on PATH (the environment's own, /usr/bin's, git-core's) is the shim, which runs the real git.
      expect((await s.exec('git --version')).stdout).toMatch(/^git version \d/);
      expect((await s.exec('/opt/fw-test-tool/bin/git --version; /usr/lib/git-core/git --version')).stdout).toMatch(/^git version \d.*\ngit version \d/);
      await s.exec('/usr/lib/git-core/git log --oneline; /usr/lib/git-core/git-log --oneline; /opt/fw-test-tool/bin/git log --all');
      const logged = s.observations().filter((o) => o.kind === 'git.history-needed').map((o) => (o.detail.argv as string[]).join(' '));
      expect(logged).toEqual(['git log --oneline', 'git log --oneline', 'git log --all']);
      await s.exec('echo changed >> README.md');
      const patch = await s.diff();
      expect(patch).toContain('README.md');
      expect(patch).not.toContain('node_modules');
      expect((await s.reaudit())?.ok).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('the git log the harness reads back is never followed out of the attempt (a link to a host file stays untouched)', async () => {
    const victim = join(work, 'victim.txt');
    writeFileSync(victim, 'host file: must not be read or truncated\n');
    const s = await provider.open(spec());
    try {
      await s.exec(`rm -f /tmp/.flywheel/git.log && ln -s ${victim} /tmp/.flywheel/git.log && git log --oneline`);
      await s.exec(`rm -rf /tmp/.flywheel && ln -s ${work} /tmp/.flywheel && git log --oneline`);
      expect(readFileSync(victim, 'utf8')).toBe('host file: must not be read or truncated\n');
      expect(JSON.stringify(s.observations())).not.toContain('must not be read');
    } finally {
      await s.close();
    }
  });

  it('a source of plain files (no .git) gets a one-commit repository; stdin reaches the command', async () => {
    const plain = join(work, 'plain');
    mkdirSync(plain, { recursive: true });
    writeFileSync(join(plain, 'main.py'), 'print(1)\n');
    const s = await provider.open(spec({ sourceDir: plain, baseCommit: undefined }));
    try {
      expect((await s.exec('git log --format=%s')).stdout).toBe('Task base\n');
      expect((await s.exec('cat', { stdin: 'from stdin' })).stdout).toBe('from stdin');
      await s.exec(`echo 'print(2)' > ${s.workdir}/main.py`);
      expect(s.observations().filter((o) => o.kind === 'read.outside-workspace')).toEqual([]);
      expect(await s.diff()).toContain('+print(2)');
    } finally {
      await s.close();
    }
  });

  it('sweep removes the attempts of a harness that died without closing them', async () => {
    const p = new NamespaceSandboxProvider({ root: join(work, 'crashed') });
    const s = await p.open(spec());
    const live = await p.open(spec());
    const attemptDir = join(s.workdir, '..');
    writeFileSync(join(attemptDir, 'owner'), '999999999\n');
    const cgroups = readFileSync(join(attemptDir, 'cgroups'), 'utf8').trim().split('\n');
    for (const dir of cgroups) expect(existsSync(dir)).toBe(true);
    expect(await p.sweep()).toEqual([attemptDir.split('/').at(-1)]);
    expect(existsSync(attemptDir)).toBe(false);
    // The crashed attempt's cgroups went with it.
    for (const dir of cgroups) expect(existsSync(dir)).toBe(false);
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(s.workdir);
    expect((await live.exec('echo still here')).stdout).toBe('still here\n');
    await s.close();
    await live.close();
    expect(readdirSync(p.attemptsDir)).toEqual([]);
  });

  it('refuses to run when the strict audit fails, and leaves nothing behind', async () => {
    const p = new NamespaceSandboxProvider({ root: join(work, 'tampered') });
    // Build the cache, then plant a later object in the cached stripped repository.
    const first = await p.open(spec());
    await first.close();
    const cache = join(p.root, 'cache');
    const layer = readdirSync(cache).find((n) => n.startsWith('strict-') && !n.endsWith('.json'));
    expect(layer).toBeDefined();
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['--git-dir', join(cache, layer!, '.git'), 'hash-object', '-w', '--stdin'], { input: ANSWER });
    await expect(p.open(spec())).rejects.toBeInstanceOf(SandboxSetupError);
    expect(readdirSync(p.attemptsDir)).toEqual([]);
    expect(processesWith(join(p.root, 'attempts'))).toEqual([]);
    expect(existsSync(p.attemptsDir)).toBe(true);
  });
});
