/**
 * A build's code (a source package's setup.py, a lockfile's `link` entries) writes the layer, and the harness reads
 * and removes files of it afterwards as root: links planted by the build must never be followed out of the layer.
 * The builds here are fakes that plant such links next to a host canary; the canary must survive.
 */
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { BuildJob, BuildRunner } from '../../../lib/harness/environment/build-runner.ts';
import { CachedEnvironmentResolver, ENVIRONMENT_BUILD_ERROR } from '../../../lib/harness/environment/cached-environments.ts';
import type { EnvironmentManifest } from '../../../lib/harness/environment/environment-manifest.ts';
import { LayerFs } from '../../../lib/harness/environment/layer-fs.ts';
import { buildNodeLayer, type NodeLayerInput } from '../../../lib/harness/environment/node-layer.ts';
import { buildPythonLayer, type PythonLayerInput } from '../../../lib/harness/environment/python-layer.ts';
import { writeTree } from './environment-fixture.ts';

const CANARY = 'FLYWHEEL_CANARY_91c2\n';
const SITE = 'lib/python3.99/site-packages';

let work: string;
/** A host folder the builds point links at: `etc/canary.txt`, and a package.json named like the project. */
let host: string;
let n = 0;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'fw-layer-links-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));
beforeEach(() => {
  host = writeTree(join(work, `host-${++n}`), {
    'etc/canary.txt': CANARY,
    'etc/package.json': JSON.stringify({ name: 'proj', version: '1.0.0' }),
    'proj/package.json': JSON.stringify({ name: 'proj', version: '1.0.0' }),
    'proj/index.js': CANARY,
    'METADATA': 'Name: calc\nVersion: 9\n',
    'RECORD': 'etc/canary.txt,,\n',
  });
});

function hostIntact(): void {
  expect(readFileSync(join(host, 'etc', 'canary.txt'), 'utf8')).toBe(CANARY);
  expect(readFileSync(join(host, 'proj', 'index.js'), 'utf8')).toBe(CANARY);
  expect(existsSync(join(host, 'etc', 'package.json'))).toBe(true);
  expect(readFileSync(join(host, 'RECORD'), 'utf8')).toBe('etc/canary.txt,,\n');
}

/** A runner that "builds" by calling `plant(layer)` on the host folder bound as the output. */
function fakeRunner(plant: (layer: string) => void): BuildRunner {
  return async (job: BuildJob) => {
    plant(job.outputs[0]!.source);
    return { exitCode: 0, signal: null, stdout: '', stderr: '', durationMs: 1 };
  };
}

const context = (run: BuildRunner) => ({ key: `test-${n}`, run, toolchainEnvironment: { id: 't', binds: [], pathDirs: [] }, timeoutMs: 10_000, env: {} });

const pythonInput: PythonLayerInput = {
  plan: { requirements: [], skipped: [], files: ['pyproject.toml'], projectNames: ['calc'], topLevel: ['calc'] },
  toolchain: { kind: 'python', executable: '/usr/bin/python3', prefix: '/usr', binDir: '/usr/bin', version: '3.99.0', fullVersion: '3.99.0', packageDirs: [] } as PythonLayerInput['toolchain'],
  source: { args: [], allowHosts: [], readDirs: [], describe: {} },
};

const nodeInput: NodeLayerInput = {
  plan: { packageJson: JSON.stringify({ name: 'proj' }), projectName: 'proj', files: ['package.json'] },
  toolchain: { kind: 'node', executable: process.execPath, prefix: '/usr', binDir: '/usr/bin', version: '24.0.0', npmDir: '/usr/lib/node_modules/npm' },
  source: { args: [], allowHosts: [], readDirs: [], describe: {} },
};

async function expectRefused(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(error?.name).toBe(`Flywheel.${ENVIRONMENT_BUILD_ERROR}`);
  return error!;
}

/** A site-packages with one ordinary distribution (`six`) besides what `extra` plants. */
function venv(layer: string, extra: (site: string) => void): void {
  const site = join(layer, SITE);
  writeTree(site, { 'six.py': '', 'six-1.17.0.dist-info/METADATA': 'Name: six\nVersion: 1.17.0\n', 'six-1.17.0.dist-info/RECORD': 'six.py,,\n' });
  extra(site);
}

describe('the Python layer, after a build that planted links', () => {
  it('refuses a RECORD that removes through site-packages/zz -> a host folder; the host file survives', async () => {
    const entry = join(work, `entry-${n}`);
    const error = await expectRefused(
      buildPythonLayer(entry, pythonInput, context(fakeRunner((layer) =>
        venv(layer, (site) => {
          symlinkSync(host, join(site, 'zz'));
          writeTree(site, { 'x.dist-info/METADATA': 'Name: calc\nVersion: 1\n', 'x.dist-info/RECORD': 'zz/etc/canary.txt,,\nzz/etc,,\nzz/proj,,\n' });
        }),
      ))),
    );
    expect(error.message).toMatch(/symlink/);
    hostIntact();
    expect(existsSync(join(entry, 'env.json'))).toBe(false);
  });

  it('refuses a top_level.txt (egg-info without a file list) naming a path through a link', async () => {
    await expectRefused(
      buildPythonLayer(join(work, `entry-${n}`), pythonInput, context(fakeRunner((layer) =>
        venv(layer, (site) => {
          symlinkSync(host, join(site, 'zz'));
          writeTree(site, { 'calc.egg-info/PKG-INFO': 'Name: calc\nVersion: 1\n', 'calc.egg-info/top_level.txt': 'zz/etc\nzz/proj\n' });
        }),
      ))),
    );
    hostIntact();
  });

  it('refuses a metadata folder that is a link to a host folder (never read, never removed)', async () => {
    await expectRefused(buildPythonLayer(join(work, `entry-${n}`), pythonInput, context(fakeRunner((layer) => venv(layer, (site) => symlinkSync(host, join(site, 'calc-1.dist-info')))))));
    hostIntact();
  });

  it('refuses lib/pythonX.Y or site-packages that are links', async () => {
    await expectRefused(
      buildPythonLayer(join(work, `entry-${n}-a`), pythonInput, context(fakeRunner((layer) => {
        mkdirSync(join(layer, 'lib'));
        writeTree(host, { 'site-packages/x.dist-info/METADATA': 'Name: calc\n', 'site-packages/x.dist-info/RECORD': '../../../etc/canary.txt,,\n' });
        symlinkSync(host, join(layer, 'lib', 'python3.99'));
      }))),
    );
    hostIntact();
    expect(existsSync(join(host, 'site-packages', 'x.dist-info', 'RECORD'))).toBe(true);
    await expectRefused(
      buildPythonLayer(join(work, `entry-${n}-b`), pythonInput, context(fakeRunner((layer) => {
        mkdirSync(join(layer, 'lib', 'python3.99'), { recursive: true });
        symlinkSync(join(host, 'site-packages'), join(layer, SITE));
      }))),
    );
    hostIntact();
    expect(existsSync(join(host, 'site-packages', 'x.dist-info', 'RECORD'))).toBe(true);
  });

  it('a RECORD naming the link itself: the link is removed, not followed; ordinary removals still work', async () => {
    const entry = join(work, `entry-${n}`);
    const manifest: EnvironmentManifest = await buildPythonLayer(entry, pythonInput, context(fakeRunner((layer) =>
      venv(layer, (site) => {
        symlinkSync(join(host, 'etc'), join(site, 'zz'));
        symlinkSync(join(host, 'etc', 'canary.txt'), join(site, 'calc.py'));
        writeTree(site, { 'calc/__init__.py': '', 'calc/__pycache__/x.pyc': '', 'calc-1.dist-info/METADATA': 'Name: calc\nVersion: 1\n', 'calc-1.dist-info/RECORD': 'zz,,\ncalc.py,,\ncalc/__init__.py,,\n../../../bin/calc,,\n../../../../../outside,,\n' });
        writeTree(layer, { 'bin/calc': '', 'bin/python': '' });
      }),
    )));
    hostIntact();
    const site = join(entry, 'layer', SITE);
    expect(readdirSync(site).sort()).toEqual(['six-1.17.0.dist-info', 'six.py']);
    expect(readdirSync(join(entry, 'layer', 'bin'))).toEqual(['python']);
    expect(manifest.removed).toEqual([{ name: 'calc', version: '1', path: `${SITE}/calc-1.dist-info`, reason: "its name is the project's (calc)" }]);
    expect(manifest.installed).toEqual([{ name: 'six', version: '1.17.0' }]);
  });
});

describe('the Node layer, after a build that planted links', () => {
  it("refuses a package's node_modules that is a link to a host folder holding the project's package; the host survives", async () => {
    await expectRefused(
      buildNodeLayer(join(work, `entry-${n}`), nodeInput, context(fakeRunner((layer) => {
        writeTree(layer, { 'node_modules/a/package.json': JSON.stringify({ name: 'a', version: '1.0.0' }) });
        symlinkSync(host, join(layer, 'node_modules', 'a', 'node_modules'));
      }))),
    );
    hostIntact();
  });

  it('refuses node_modules, a scope folder or .bin that are links', async () => {
    await expectRefused(buildNodeLayer(join(work, `entry-${n}-a`), nodeInput, context(fakeRunner((layer) => symlinkSync(host, join(layer, 'node_modules'))))));
    hostIntact();
    await expectRefused(
      buildNodeLayer(join(work, `entry-${n}-b`), nodeInput, context(fakeRunner((layer) => {
        mkdirSync(join(layer, 'node_modules'));
        symlinkSync(host, join(layer, 'node_modules', '@scope'));
      }))),
    );
    hostIntact();
    writeTree(host, { 'bin/proj': CANARY });
    symlinkSync(join(host, 'proj', 'index.js'), join(host, 'bin', 'proj-link'));
    await expectRefused(
      buildNodeLayer(join(work, `entry-${n}-c`), nodeInput, context(fakeRunner((layer) => {
        writeTree(layer, { 'node_modules/proj/package.json': JSON.stringify({ name: 'proj', version: '2.0.0' }) });
        symlinkSync(join(host, 'bin'), join(layer, 'node_modules', '.bin'));
      }))),
    );
    hostIntact();
    expect(readdirSync(join(host, 'bin')).sort()).toEqual(['proj', 'proj-link']);
  });

  it("a linked package named like the project is neither entered nor followed; a real copy is replaced by the workspace link", async () => {
    const entry = join(work, `entry-${n}`);
    const manifest = await buildNodeLayer(entry, nodeInput, context(fakeRunner((layer) => {
      writeTree(layer, {
        'node_modules/dep/package.json': JSON.stringify({ name: 'dep', version: '1.0.0' }),
        'node_modules/dep/node_modules/proj/package.json': JSON.stringify({ name: 'proj', version: '2.0.0' }),
      });
      symlinkSync(join(host, 'proj'), join(layer, 'node_modules', 'proj'));
    })));
    hostIntact();
    const nested = join(entry, 'layer', 'node_modules', 'dep', 'node_modules', 'proj');
    expect(lstatSync(nested).isSymbolicLink()).toBe(true);
    expect(readlinkSync(nested)).toBe('../../..');
    expect(manifest.removed.map((r) => r.path)).toEqual(['node_modules/dep/node_modules/proj']);
    expect(manifest.installed).toEqual([{ name: 'dep', version: '1.0.0' }]);
  });
});

describe('through the resolver', () => {
  it('a refused layer is an EnvironmentBuildError and leaves nothing in the cache', async () => {
    const cacheDir = join(work, 'cache');
    const tree = writeTree(join(work, 'tree'), { 'pyproject.toml': '[project]\nname = "calc"\ndependencies = ["six"]\n', 'calc/__init__.py': '' });
    const resolver = new CachedEnvironmentResolver({
      cacheDir,
      environmentImage: false,
      builder: fakeRunner((layer) => {
        if (!existsSync(join(layer, '.flywheel-output'))) return;
        venv(layer, (site) => {
          symlinkSync(host, join(site, 'zz'));
          writeTree(site, { 'x.dist-info/METADATA': 'Name: calc\n', 'x.dist-info/RECORD': 'zz/etc/canary.txt,,\n' });
        });
      }),
    });
    await expectRefused(resolver.resolve({ treeDir: tree }));
    hostIntact();
    expect(readdirSync(cacheDir).filter((name) => !name.startsWith('.build-sandbox'))).toEqual([]);
  });
});

describe.runIf(process.getuid?.() === 0)('a published layer (as root)', () => {
  it("is root's and read-only, so the sandbox user that built it can change nothing", async () => {
    const entry = join(work, `entry-${n}`);
    await buildPythonLayer(entry, pythonInput, context(fakeRunner((layer) => {
      venv(layer, () => undefined);
      writeTree(layer, { 'bin/tool': '#!/bin/sh\n' });
      chmodSync(join(layer, 'bin', 'tool'), 0o4777);
      for (const p of [layer, join(layer, 'bin'), join(layer, 'bin', 'tool'), join(layer, SITE)]) chownSync(p, 61000, 61000);
      chmodSync(join(layer, SITE), 0o777);
      symlinkSync(join(host, 'etc', 'canary.txt'), join(layer, 'bin', 'link'));
    })));
    const layer = join(entry, 'layer');
    for (const p of [layer, join(layer, 'bin'), join(layer, 'bin', 'tool'), join(layer, SITE), join(layer, SITE, 'six.py')]) {
      const st = statSync(p);
      expect([p, st.uid, st.gid, st.mode & 0o7222]).toEqual([p, 0, 0, 0]);
      expect(st.mode & 0o444).toBe(0o444);
    }
    expect(statSync(join(layer, 'bin', 'tool')).mode & 0o111).toBe(0o111);
    // The link's target (a host file) was not touched by chown/chmod.
    expect(statSync(join(host, 'etc', 'canary.txt')).mode & 0o222).not.toBe(0);
    hostIntact();
  });
});

describe('LayerFs', () => {
  it('reads only regular files inside, through real folders', async () => {
    const layer = writeTree(join(work, `fs-${n}`), { 'a/b.txt': 'b' });
    symlinkSync(join(host, 'etc', 'canary.txt'), join(layer, 'a', 'link.txt'));
    symlinkSync(join(host, 'etc'), join(layer, 'dir'));
    const fs = await LayerFs.open(layer);
    expect(await fs.readText('a/b.txt')).toBe('b');
    expect(await fs.readText('a/link.txt')).toBe('');
    expect(await fs.readText('../' + host.split('/').pop() + '/etc/canary.txt')).toBe('');
    await expect(fs.readText('dir/canary.txt')).rejects.toThrow(/symlink/);
    await expect(fs.readdir('dir')).rejects.toThrow(/symlink/);
    await fs.remove('a/link.txt');
    await fs.remove('dir');
    expect(readdirSync(layer).sort()).toEqual(['a']);
    hostIntact();
  });
});
