import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CachedEnvironmentResolver,
  ENVIRONMENT_BUILD_ERROR,
  NODE_ENV_TARGET,
  PYTHON_ENV_TARGET,
  type CachedEnvironmentOptions,
  type CachedSandboxEnvironment,
  type EnvironmentEvent,
} from '../../../lib/harness/environment/cached-environments.ts';
import { cachedEnvironmentResolver, NamespaceSandboxProvider } from '../../../lib/harness/sandbox/namespace-sandbox.ts';
import { runInEnvironment, writeTree } from './environment-fixture.ts';

/** The builder under test: the strict sandbox (default); FLYWHEEL_TEST_ENV_BUILDER=process runs the same builds as plain processes. */
const builder = (process.env.FLYWHEEL_TEST_ENV_BUILDER as CachedEnvironmentOptions['builder'] | undefined) ?? 'sandbox';

let work: string;
let cacheDir: string;
const events: EnvironmentEvent[] = [];
let resolver: CachedEnvironmentResolver;
let pyTree: string;
let pyEnv: CachedSandboxEnvironment;
let selfTree: string;
let selfEnv: CachedSandboxEnvironment;
let nodeTree: string;
let nodeEnv: CachedSandboxEnvironment;
/** A package the host's python3 imports that no task environment here installs. */
let hostOnly: string;

const timed: Record<string, number> = {};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'fw-envs-'));
  // The build sandbox's unprivileged user must reach the cache and the bound folders below it.
  chmodSync(work, 0o755);
  cacheDir = join(work, 'cache');
  resolver = cachedEnvironmentResolver({ cacheDir, builder, onEvent: (e) => events.push(e) });
  hostOnly = ['torch', 'numpy', 'requests', 'yaml', 'attr'].find((m) => {
    try {
      execFileSync('python3', ['-c', `import ${m}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })!;
  pyTree = writeTree(join(work, 'py'), {
    'requirements.txt': '# runtime\nsix==1.17.0\n-e .\n',
    'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1.0"\n',
    'calc/__init__.py': 'def add(a, b):\n    return a + b\n',
    'tests/test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n',
  });
  // The package under test is a dependency of pytest (iniconfig), and the tree also holds a top-level package that a
  // dependency provides (pluggy): both installed copies must go.
  selfTree = writeTree(join(work, 'self'), {
    'pyproject.toml': '[project]\nname = "iniconfig"\ndependencies = ["six"]\n[project.optional-dependencies]\ntest = ["iniconfig[dev]", "pytest"]\n',
    'src/iniconfig/__init__.py': 'WORKSPACE = True\n',
    'pluggy/__init__.py': 'WORKSPACE = True\n',
  });
  nodeTree = writeTree(join(work, 'node'), {
    'package.json': JSON.stringify({ name: 'is-number', version: '9.9.9', scripts: { postinstall: 'touch /tmp/fw-postinstall-ran' }, dependencies: { 'is-odd': '3.0.1' } }, null, 2),
    'index.js': 'module.exports = (n) => typeof n === "number" || "workspace";\n',
  });
  execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: nodeTree, stdio: 'ignore' });
  let t = Date.now();
  pyEnv = await resolver.resolve({ treeDir: pyTree });
  timed.pythonCold = Date.now() - t;
  t = Date.now();
  selfEnv = await resolver.resolve({ treeDir: selfTree });
  timed.selfCold = Date.now() - t;
  t = Date.now();
  nodeEnv = await resolver.resolve({ treeDir: nodeTree });
  timed.nodeCold = Date.now() - t;
}, 300_000);

afterAll(() => {
  console.log(`environment builds (${builder}): ${JSON.stringify(timed)}`);
  rmSync(work, { recursive: true, force: true });
});

describe('the Python layer', () => {
  it('is a virtualenv with the declared dependency and pytest, and none of the host packages', () => {
    expect(pyEnv.binds).toContainEqual({ source: expect.stringContaining(cacheDir) as string, target: PYTHON_ENV_TARGET });
    expect(pyEnv.pathDirs[0]).toBe(`${PYTHON_ENV_TARGET}/bin`);
    expect(pyEnv.env?.VIRTUAL_ENV).toBe(PYTHON_ENV_TARGET);
    const r = runInEnvironment(pyEnv, pyTree, `python -c "import sys, six, pytest; print(sys.prefix, six.__version__)"; python -m pytest -q tests 2>&1 | tail -1; python -c "import ${hostOnly}" 2>&1 | tail -1`);
    expect(r.stderr).toBe('');
    const [first, second, third] = r.stdout.trim().split('\n');
    expect(first).toBe(`${PYTHON_ENV_TARGET} 1.17.0`);
    expect(second).toMatch(/1 passed/);
    expect(third).toMatch(new RegExp(`ModuleNotFoundError: No module named '${hostOnly}'`));
    const manifest = pyEnv.manifests[0]!;
    expect(manifest.kind).toBe('python');
    expect(manifest.installed.map((p) => p.name)).toEqual(expect.arrayContaining(['six', 'pytest']));
    expect(manifest.installed.map((p) => p.name.toLowerCase())).not.toContain(hostOnly);
    // The project itself was never asked for.
    expect(manifest.skipped).toContainEqual({ line: '-e .', from: 'requirements.txt', reason: 'editable (the project or local code)' });
    expect(manifest.installed.map((p) => p.name)).not.toContain('calc');
    if (process.getuid?.() === 0) {
      // Published sealed: root's, no write bit, so the sandbox user that built it can change nothing of it.
      const layer = pyEnv.binds.find((b) => b.target === PYTHON_ENV_TARGET)!.source;
      for (const rel of ['', ...readdirSync(layer, { recursive: true }).map(String)]) {
        const st = lstatSync(join(layer, rel));
        if (!st.isSymbolicLink()) expect([rel, st.uid, st.mode & 0o6222]).toEqual([rel, 0, 0]);
      }
    }
  });

  it("covers the interpreter's own site-packages: the toolchain's python3 imports nothing of the host either", () => {
    const python = resolver.options; // resolver detected the toolchain once
    void python;
    expect(pyEnv.masks?.some((m) => m.endsWith('site-packages'))).toBe(true);
    const sitePackages = execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']).toString().trim();
    expect(pyEnv.masks).toContain(sitePackages);
    const r = runInEnvironment({ ...pyEnv, pathDirs: pyEnv.pathDirs.filter((d) => !d.startsWith(PYTHON_ENV_TARGET)), env: {} }, pyTree, `python3 -c "import ${hostOnly}" 2>&1 | tail -1`);
    expect(r.stdout).toMatch(/ModuleNotFoundError/);
  });

  it('is keyed by the lockfiles: the same requirements reuse the layer, a changed pin builds another', async () => {
    const copy = writeTree(join(work, 'py-copy'), { ...treeFiles(pyTree), 'calc/__init__.py': 'def add(a, b):\n    return b + a  # an edit of the code\n' });
    const before = events.filter((e) => e.kind === 'build-start').length;
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      const again = await cachedEnvironmentResolver({ cacheDir, builder }).resolve({ treeDir: copy });
      times.push(Date.now() - t);
      expect(again.id).toBe(pyEnv.id);
    }
    timed.pythonCachedNewResolverMedian = times.sort((a, b) => a - b)[1]!;
    const same: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = Date.now();
      expect((await resolver.resolve({ treeDir: copy })).id).toBe(pyEnv.id);
      same.push(Date.now() - t);
    }
    timed.pythonCachedSameResolverMedian = same.sort((a, b) => a - b)[1]!;
    expect(events.filter((e) => e.kind === 'build-start').length).toBe(before);
    const pinned = writeTree(join(work, 'py-pin'), { ...treeFiles(pyTree), 'requirements.txt': 'six==1.16.0\n' });
    const [a, b] = await Promise.all([resolver.plan({ treeDir: pyTree }), resolver.plan({ treeDir: pinned })]);
    expect(a.python!.key).toMatch(/^python-[0-9a-f]{32}$/);
    expect(b.python!.key).not.toBe(a.python!.key);
    expect((await resolver.plan({ treeDir: copy })).python!.key).toBe(a.python!.key);
  });

  it('removes an installed release of the package under test (by name and by top-level package) and records it', () => {
    const manifest = selfEnv.manifests[0]!;
    expect(manifest.project).toEqual({ names: ['iniconfig'], topLevel: ['iniconfig', 'pluggy'] });
    expect(manifest.removed.map((r) => r.name).sort()).toEqual(['iniconfig', 'pluggy']);
    expect(manifest.removed.find((r) => r.name === 'iniconfig')!.reason).toMatch(/name is the project's/);
    expect(manifest.removed.find((r) => r.name === 'pluggy')!.reason).toMatch(/top-level package pluggy/);
    expect(manifest.skipped).toContainEqual({ line: 'iniconfig[dev]', from: 'pyproject.toml', reason: 'the project itself (package under test)' });
    expect(manifest.installed.map((p) => p.name)).toContain('six');
    const onDisk = JSON.parse(readFileSync(join(selfEnv.binds.find((b) => b.target === PYTHON_ENV_TARGET)!.source, '..', 'env.json'), 'utf8'));
    expect(onDisk.removed).toEqual(manifest.removed);
    // Inside, the workspace's copy is the one imported.
    const r = runInEnvironment(selfEnv, selfTree, 'PYTHONPATH=src:. python -c "import iniconfig, pluggy; print(iniconfig.WORKSPACE, pluggy.WORKSPACE)"; python -c "import iniconfig" 2>&1 | tail -1');
    expect(r.stdout.trim().split('\n')).toEqual(['True True', "ModuleNotFoundError: No module named 'iniconfig'"]);
  });

  it('two resolvers in two processes build a new layer once', async () => {
    const tree = writeTree(join(work, 'race'), { 'requirements.txt': 'iniconfig\n', 'test_x.py': 'def test_x():\n    pass\n' });
    const script = join(work, 'race.ts');
    const module = fileURLToPath(new URL('../../../lib/harness/sandbox/namespace-sandbox.ts', import.meta.url));
    writeTree(work, {
      'race.ts': `import { cachedEnvironmentResolver } from ${JSON.stringify(module)};\nconst events = [];\nconst env = await cachedEnvironmentResolver({ cacheDir: ${JSON.stringify(cacheDir)}, builder: ${JSON.stringify(builder)}, onEvent: (e) => events.push(e.kind) }).resolve({ treeDir: ${JSON.stringify(tree)} });\nconsole.log(JSON.stringify({ id: env.id, events }));\n`,
    });
    const runOne = () =>
      new Promise<{ id: string; events: string[] }>((done, fail) => {
        const child = spawn(process.execPath, ['--no-warnings', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => (code === 0 ? done(JSON.parse(out.trim().split('\n').at(-1)!)) : fail(new Error(`exit ${code}: ${err}`))));
      });
    const [a, b] = await Promise.all([runOne(), runOne()]);
    expect(a.id).toBe(b.id);
    expect([...a.events, ...b.events].sort()).toEqual(['build-done', 'build-start', 'cache-hit']);
    expect(readdirSync(cacheDir).filter((n) => n.endsWith('.lock') || n.startsWith('.tmp-'))).toEqual([]);
  }, 120_000);

  it('a failed build is an EnvironmentBuildError naming the file, and leaves nothing in the cache', async () => {
    const tree = writeTree(join(work, 'broken'), { 'requirements-test.txt': 'flywheel-no-such-package-7c1e==1.0\n', 'test_x.py': '' });
    const before = readdirSync(cacheDir).sort();
    const error = await resolver.resolve({ treeDir: tree }).then(
      () => undefined,
      (e: unknown) => e as Error & { files: string[] },
    );
    expect(error?.name).toBe(`Flywheel.${ENVIRONMENT_BUILD_ERROR}`);
    expect(error?.message).toMatch(/pip install from requirements-test\.txt exited 1/);
    expect(error?.message).toMatch(/flywheel-no-such-package-7c1e/);
    expect(error?.files).toEqual(['requirements-test.txt']);
    expect(readdirSync(cacheDir).sort()).toEqual(before);
  }, 120_000);
});

describe('in the strict sandbox (the provider resolves the environment itself)', () => {
  it("a Python task's commands see the venv and not the host's packages; a Node task's see the node_modules layer", async () => {
    const provider = new NamespaceSandboxProvider({ root: join(work, 'sb'), environments: resolver });
    const limits = { commandTimeoutMs: 60_000, outputBytes: 65536 };
    const py = await provider.open({ sourceDir: pyTree, mode: 'strict', networkAllowList: [], limits });
    try {
      const r = await py.exec(`python -c "import six; print(six.__version__)"; python -m pytest -q tests 2>&1 | tail -1; python3 -c "import ${hostOnly}" 2>&1 | tail -1; echo $VIRTUAL_ENV`);
      expect(r.stdout.trim().split('\n')).toEqual(['1.17.0', expect.stringMatching(/1 passed/) as string, `ModuleNotFoundError: No module named '${hostOnly}'`, PYTHON_ENV_TARGET]);
    } finally {
      await py.close();
    }
    const node = await provider.open({ sourceDir: nodeTree, mode: 'strict', networkAllowList: [], limits });
    try {
      const r = await node.exec(`node -e "console.log(typeof require('is-odd'))" 2>&1; touch node_modules/x 2>&1 | grep -c 'Read-only' `);
      expect(r.stdout.trim().split('\n')).toEqual(['function', '1']);
    } finally {
      await node.close();
    }
  }, 120_000);
});

describe('inside a task image', () => {
  it('the image is the environment: nothing built, the interpreters keep their own packages', async () => {
    const tree = writeTree(join(work, 'in-image'), { 'requirements.txt': 'flywheel-never-built==1\n', 'package.json': '{"name":"x"}' });
    const seen: EnvironmentEvent[] = [];
    const env = await cachedEnvironmentResolver({ cacheDir, builder, environmentImage: 'swebench/sweb.eval.x86_64.a_1776_b:latest', onEvent: (e) => seen.push(e) }).resolve({ treeDir: tree });
    expect(seen).toEqual([]);
    expect(env.masks).toEqual([]);
    expect(env.manifests).toEqual([]);
    expect(env.env).toEqual({ FLYWHEEL_ENVIRONMENT_IMAGE: 'swebench/sweb.eval.x86_64.a_1776_b:latest' });
    expect(env.binds.map((b) => b.target)).not.toContain(PYTHON_ENV_TARGET);
    expect(runInEnvironment(env, tree, `python3 -c "import ${hostOnly}; print('ok')"`).stdout.trim()).toBe('ok');
  });
});

describe('the Node layer', () => {
  it("is the lockfile's node_modules at the workspace's node_modules, without lifecycle scripts, the project's own package removed", () => {
    expect(nodeEnv.workspaceBinds).toEqual([{ source: expect.stringContaining(cacheDir) as string, path: 'node_modules' }]);
    expect(nodeEnv.pathDirs).toContain(`${NODE_ENV_TARGET}/node_modules/.bin`);
    const manifest = nodeEnv.manifests.find((m) => m.kind === 'node')!;
    expect(manifest.inputs).toEqual(['package.json', 'package-lock.json']);
    expect(manifest.installed).toEqual([{ name: 'is-odd', version: '3.0.1' }]);
    // is-odd depends on is-number: the project's name, so the registry's copy is removed.
    expect(manifest.removed).toEqual([{ name: 'is-number', version: '6.0.0', path: 'node_modules/is-number', reason: "its name is the project's (is-number); linked to the workspace" }]);
    expect(existsSync('/tmp/fw-postinstall-ran')).toBe(false);
    // The dependency that requires the project gets the workspace's code under test.
    const r = runInEnvironment(nodeEnv, nodeTree, `node -e "const odd = require.resolve('is-odd'); console.log(odd); console.log(require.resolve('is-number', { paths: [odd] }))"`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual([join(nodeTree, 'node_modules', 'is-odd', 'index.js'), join(nodeTree, 'index.js')]);
  });
});

function treeFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out[join(entry.parentPath, entry.name).slice(dir.length + 1)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  }
  return out;
}
