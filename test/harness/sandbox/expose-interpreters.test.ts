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

describe('interpreters under hidden paths are exposed read-only; the rest stays hidden', () => {
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

  it('a pytest suite runs inside the strict sandbox with the host python (found through PATH, pyenv shims included)', async () => {
    const python = hostPytestPython();
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb-pytest') });
    const exposure = await provider.exposure();
    if (python.startsWith('/root/')) expect(exposure.binDirs).toContain(python.slice(0, python.lastIndexOf('/')));
    const session = await provider.open(spec());
    try {
      const r = await session.exec('pytest -q -p no:cacheprovider --junitxml=/tmp/junit.xml; echo "exit=$?"; cat /tmp/junit.xml');
      expect(r.stdout).toMatch(/1 failed, 1 passed/);
      expect(r.stdout).toContain('exit=1');
      expect(r.stdout).toMatch(/<testcase classname="test_calc" name="test_add"/);
      expect((await session.exec('python3 -c "import sys; print(sys.executable)"')).stdout.trim()).toBe(python);
      // Only the interpreter's prefix came back: nothing else of /root.
      const listing = (await session.exec('find /root -maxdepth 3 | sort')).stdout.trim().split('\n');
      for (const p of listing) expect(exposure.paths.some((e) => e.startsWith(p) || p.startsWith(e))).toBe(true);
      if (exposure.paths.length > 0) {
        const w = await session.exec(`touch ${exposure.paths[0]}/fw-write-test`);
        expect(w.exitCode).not.toBe(0);
        expect(w.stderr).toMatch(/Read-only file system/);
      }
    } finally {
      await session.close();
    }
  }, 60_000);

  it('exposePaths binds a folder under a hidden path read-only, puts its bin on PATH, and keeps its siblings hidden', async () => {
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
      expect((await session.exec(`cat ${secret}/credentials`)).exitCode).not.toBe(0);
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

  it('detection follows the interpreter, not the shim, and ignores what is visible anyway', async () => {
    const shims = join(work, 'hidden-root', 'shims');
    mkdirSync(shims, { recursive: true });
    // A shim in a hidden folder that hands over to the host python, as pyenv's do.
    writeFileSync(join(shims, 'python3'), `#!/bin/sh\nexec ${hostPytestPython()} "$@"\n`);
    chmodSync(join(shims, 'python3'), 0o755);
    const [prefix, executable] = execFileSync(hostPytestPython(), ['-c', 'import sys; print(sys.prefix); print(sys.executable)']).toString().trim().split('\n');
    // Hidden: the shim's folder and the interpreter's prefix. Exposed: the prefix (where the shim leads), never the shims.
    const found = await detectInterpreterExposure(['python3', 'no-such-tool'], [join(work, 'hidden-root'), prefix!], `${shims}:/usr/bin:/bin`);
    expect(found).toEqual({ paths: [prefix], binDirs: [executable!.slice(0, executable!.lastIndexOf('/'))] });
    const visible = await detectInterpreterExposure(['sh'], ['/root'], '/usr/bin:/bin');
    expect(visible).toEqual({ paths: [], binDirs: [] });
  });
});
