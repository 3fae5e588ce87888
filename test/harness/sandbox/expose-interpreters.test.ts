import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectInterpreterExposure } from '../../../lib/harness/sandbox/expose-interpreters.ts';
import { NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import type { SandboxSpec } from '../../../lib/harness/sandbox/sandbox.ts';
import { gitSync } from '../../support/git-fixture.ts';

/** Where the host's python with pytest lives (pyenv under /root here), as the host resolves it. */
function hostPytestPython(): string {
  return execFileSync('python3', ['-c', 'import sys, pytest; print(sys.executable)']).toString().trim();
}

describe('interpreters and toolchains are bound read-only with their packages covered; nothing else of the host exists', () => {
  let work: string;
  let repo: string;
  const spec = (): SandboxSpec => ({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits: { commandTimeoutMs: 60_000, outputBytes: 256 * 1024 } });

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'fw-expose-'));
    repo = join(work, 'repo');
    mkdirSync(repo);
    gitSync(repo, ['init', '-q', '-b', 'main']);
    writeFileSync(join(repo, 'calc.py'), 'def add(a, b):\n    return a + b\n');
    writeFileSync(join(repo, 'test_calc.py'), 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_fails():\n    assert add(1, 1) == 3\n');
    gitSync(repo, ['add', '-A']);
    gitSync(repo, ['commit', '-q', '-m', 'base']);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('an environment binding the host interpreter with its site-packages masked: the interpreter runs, its packages are gone, the environment\'s are importable', async () => {
    const python = hostPytestPython();
    const [prefix, site] = execFileSync(python, ['-c', 'import sys, sysconfig; print(sys.base_prefix); print(sysconfig.get_paths()["purelib"])']).toString().trim().split('\n') as [string, string];
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-pytest'), exposeInterpreters: false });
    // The environment's package folder: here the host's own site-packages, bound elsewhere (a real environment binds
    // a virtualenv built for the task).
    const session = await provider.open({
      ...spec(),
      environment: {
        id: 'test-python',
        binds: [
          { source: prefix, target: prefix },
          { source: site, target: '/opt/fw-test/site' },
        ],
        masks: [site],
        pathDirs: [join(prefix, 'bin')],
        env: { PYTHONPATH: '/opt/fw-test/site' },
      },
    });
    try {
      expect((await session.exec(`ls -A ${site} | wc -l; test -d ${site} && echo present`)).stdout).toBe('0\npresent\n');
      expect((await session.exec('python3 -c "import sys; print(sys.executable)"')).stdout.trim()).toBe(python);
      const r = await session.exec('python3 -m pytest -q -p no:cacheprovider --junitxml=/tmp/junit.xml; echo "exit=$?"; cat /tmp/junit.xml');
      expect(r.stdout).toMatch(/1 failed, 1 passed/);
      expect(r.stdout).toContain('exit=1');
      expect(r.stdout).toMatch(/<testcase classname="test_calc" name="test_add"/);
      // pytest came from the environment's folder, not the interpreter's own (covered) one.
      expect((await session.exec('python3 -c "import pytest; print(pytest.__file__)"')).stdout).toMatch(/^\/opt\/fw-test\/site\/pytest\//);
      // Only the path down to the interpreter's prefix exists of /root.
      const listing = (await session.exec('find /root -maxdepth 3 | sort')).stdout.trim().split('\n');
      for (const p of listing) expect(prefix.startsWith(p)).toBe(true);
      const w = await session.exec(`touch ${prefix}/fw-write-test`);
      expect(w.exitCode).not.toBe(0);
      expect(w.stderr).toMatch(/Read-only file system/);
    } finally {
      await session.close();
    }
  }, 60_000);

  it('exposeInterpreters (default): the host python3 is in every sandbox, its own packages covered', async () => {
    const python = hostPytestPython();
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-default') });
    const exposure = await provider.exposure();
    const session = await provider.open({ ...spec(), environment: { id: 'empty', binds: [], pathDirs: [] } });
    try {
      expect((await session.exec('python3 -c "import sys; print(sys.executable)"')).stdout.trim()).toBe(python);
      const r = await session.exec('python3 -c "import pytest"');
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr).toMatch(/No module named .?pytest/);
      expect(exposure.masks.length).toBeGreaterThan(0);
      for (const m of exposure.masks) expect((await session.exec(`ls -A ${m} | wc -l`)).stdout).toBe('0\n');
    } finally {
      await session.close();
    }
  }, 60_000);

  it('exposePaths binds a folder read-only at the same path, puts its bin on PATH; its siblings do not exist inside', async () => {
    const secret = join(work, 'private');
    const tool = join(secret, 'toolchain');
    mkdirSync(join(tool, 'bin'), { recursive: true });
    writeFileSync(join(tool, 'bin', 'fw-hello'), '#!/bin/sh\necho hello from the toolchain\n');
    chmodSync(join(tool, 'bin', 'fw-hello'), 0o755);
    writeFileSync(join(secret, 'credentials'), 'top secret\n');
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-explicit'), hide: [secret], exposePaths: [tool], exposeInterpreters: false });
    const session = await provider.open(spec());
    try {
      expect((await session.exec('fw-hello')).stdout).toBe('hello from the toolchain\n');
      expect((await session.exec(`ls ${secret}`)).stdout.trim()).toBe('toolchain');
      const secretRead = await session.exec(`cat ${secret}/credentials`);
      expect(secretRead.exitCode).not.toBe(0);
      expect(secretRead.stderr).toMatch(/No such file/);
      const w = await session.exec(`touch ${tool}/x`);
      expect(w.stderr).toMatch(/Read-only file system/);
      // Naming the exposed toolchain is not a read outside the workspace; naming the hidden folder is.
      expect(session.observations().filter((o) => o.kind === 'read.outside-workspace').map((o) => o.detail['command'])).toEqual([
        `ls ${secret}`,
        `cat ${secret}/credentials`,
      ]);
    } finally {
      await session.close();
    }
  });

  it('refuses to expose the sandbox root or a folder holding the task source', async () => {
    const root = join(work, 'sb-refuse');
    await expect(new NamespaceSandboxProvider({ root, exposePaths: [join(root, 'cache')], exposeInterpreters: false }).exposure()).rejects.toThrow(
      /would expose the sandbox root/,
    );
    await expect(new NamespaceSandboxProvider({ root, exposePaths: ['relative/dir'], exposeInterpreters: false }).exposure()).rejects.toThrow(/is not an absolute path/);
    const provider = new NamespaceSandboxProvider({ root, exposePaths: [repo], exposeInterpreters: false });
    await expect(provider.open(spec())).rejects.toThrow(/would show the task's source repository/);
  });

  it('detection follows the interpreter, not the shim, covers its package folders, and binds nothing the base system shows', async () => {
    const shims = join(work, 'hidden-root', 'shims');
    mkdirSync(shims, { recursive: true });
    // A shim that hands over to the host python, as pyenv's do.
    writeFileSync(join(shims, 'python3'), `#!/bin/sh\nexec ${hostPytestPython()} "$@"\n`);
    chmodSync(join(shims, 'python3'), 0o755);
    const [prefix, executable, site] = execFileSync(hostPytestPython(), ['-c', 'import sys, sysconfig; print(sys.base_prefix); print(sys.executable); print(sysconfig.get_paths()["purelib"])']).toString().trim().split('\n');
    const found = await detectInterpreterExposure(['python3', 'no-such-tool'], { pathEnv: `${shims}:/usr/bin:/bin` });
    if (prefix!.startsWith('/usr/')) {
      expect(found.paths).toEqual([]);
    } else {
      expect(found.paths).toEqual([prefix]);
      expect(found.binDirs).toEqual([executable!.slice(0, executable!.lastIndexOf('/'))]);
    }
    expect(found.masks).toContain(site);
    expect(found.paths.some((p) => p.includes('shims'))).toBe(false);
    const visible = await detectInterpreterExposure(['sh'], { pathEnv: '/usr/bin:/bin' });
    expect(visible).toEqual({ paths: [], masks: [], binDirs: [] });
  });
});
