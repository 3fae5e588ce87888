import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layerKey } from '../../../lib/harness/environment/environment-key.ts';
import { installPackageJson } from '../../../lib/harness/environment/node-layer.ts';
import { readNodePlan } from '../../../lib/harness/environment/node-manifest.ts';
import { parsePipConfigList } from '../../../lib/harness/environment/package-indexes.ts';
import { readPythonPlan } from '../../../lib/harness/environment/python-manifest.ts';
import { writeTree } from './environment-fixture.ts';

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'fw-env-manifests-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('reading what a Python tree declares (no code of it runs)', () => {
  it('requirement files, -r includes, pyproject dependencies and test extras, setup.cfg and setup.py; the project and local or URL requirements skipped', async () => {
    const tree = writeTree(join(work, 'py'), {
      'requirements.txt': 'Six>=1.16  # runtime\n-r requirements/base.txt\n-e .\n./vendored/pkg\ngit+https://github.com/x/y.git\nfoo @ https://example.com/foo.whl\n--index-url https://evil.example/simple\nattrs==23.1.0 --hash=sha256:abc\n',
      'requirements/base.txt': 'packaging\n',
      'requirements-docs.txt': 'sphinx\n',
      'requirements-test.txt': 'pytest-timeout\n',
      'pyproject.toml': '[project]\nname = "My_Calc"\ndependencies = ["iniconfig>=2", "my-calc[extra]"]\n[project.optional-dependencies]\ntest = ["hypothesis"]\ndocs = ["mkdocs"]\n[dependency-groups]\ndev = ["ruff"]\n',
      'setup.cfg': '[metadata]\nname = my-calc\n[options]\ninstall_requires =\n    pluggy\n    six\n[options.extras_require]\ntesting =\n    coverage\n',
      'setup.py': 'from setuptools import setup\nsetup(name="my-calc", install_requires=["tomli; python_version < \'3.11\'"], tests_require=["mock"])\n',
      'my_calc/__init__.py': '',
      'src/helpers/__init__.py': '',
      'tool.py': '',
      'conftest.py': '',
      'test_x.py': '',
    });
    const plan = (await readPythonPlan(tree))!;
    expect(plan.projectNames).toEqual(['my-calc']);
    expect(plan.topLevel).toEqual(['helpers', 'my_calc', 'tool']);
    expect(plan.requirements.map((r) => `${r.spec} <${r.from}>`)).toEqual([
      'attrs==23.1.0 <requirements.txt>',
      'coverage <setup.cfg>',
      'hypothesis <pyproject.toml>',
      'iniconfig>=2 <pyproject.toml>',
      'mock <setup.py>',
      'packaging <requirements/base.txt>',
      'pluggy <setup.cfg>',
      'pytest-timeout <requirements-test.txt>',
      'ruff <pyproject.toml>',
      'Six>=1.16 <requirements.txt>',
      'six <setup.cfg>',
      "tomli; python_version < '3.11' <setup.py>",
    ]);
    expect(plan.skipped.map((s) => [s.line, s.reason])).toEqual([
      ['-e .', 'editable (the project or local code)'],
      ['./vendored/pkg', 'a local path'],
      ['git+https://github.com/x/y.git', 'a URL outside the package index'],
      ['foo @ https://example.com/foo.whl', 'a direct URL reference'],
      ['--index-url https://evil.example/simple', 'a pip option'],
      ['my-calc[extra]', 'the project itself (package under test)'],
    ]);
    expect(plan.files).toEqual(['requirements-test.txt', 'requirements.txt', 'requirements/base.txt', 'pyproject.toml', 'setup.cfg', 'setup.py']);
  });

  it('a manifest that is a symlink out of the tree is not read; a tree with only tests is still a Python tree', async () => {
    const tree = writeTree(join(work, 'evil'), { 'tests/test_a.py': 'def test_a(): pass\n' });
    writeFileSync(join(work, 'host-secret.txt'), 'six\n');
    symlinkSync(join(work, 'host-secret.txt'), join(tree, 'requirements.txt'));
    const plan = (await readPythonPlan(tree))!;
    expect(plan.requirements).toEqual([]);
    expect(plan.files).toEqual([]);
    expect(await readPythonPlan(writeTree(join(work, 'not-python'), { 'README.md': 'hi\n', 'package.json': '{}' }))).toBeUndefined();
  });
});

describe('Node trees and keys', () => {
  it('package.json with its lockfile; none when node_modules is shipped; the key reads only what npm ci reads', async () => {
    const tree = writeTree(join(work, 'node'), { 'package.json': '{"name":"calc","scripts":{"test":"vitest"},"dependencies":{"is-number":"7.0.0"}}', 'package-lock.json': '{"lockfileVersion":3}' });
    const plan = (await readNodePlan(tree))!;
    expect(plan).toMatchObject({ projectName: 'calc', lockfile: { name: 'package-lock.json' }, files: ['package.json', 'package-lock.json'] });
    expect(JSON.parse(installPackageJson(plan.packageJson))).toEqual({ name: 'calc', dependencies: { 'is-number': '7.0.0' } });
    expect(await readNodePlan(writeTree(join(work, 'shipped'), { 'package.json': '{}', 'node_modules/x/index.js': '' }))).toBeUndefined();
    expect(layerKey('node', { a: 1, b: [2] })).toBe(layerKey('node', { b: [2], a: 1 }));
    expect(layerKey('node', { a: 1 })).not.toBe(layerKey('python', { a: 1 }));
  });

  it("pip's configuration as `pip config list` prints it", () => {
    expect(parsePipConfigList("global.index-url='https://mirror.example/simple'\n:env:.find-links='/opt/wheels'\nglobal.extra-index-url='file:///a/simple file:///b/simple'\n")).toEqual({
      'index-url': 'https://mirror.example/simple',
      'find-links': '/opt/wheels',
      'extra-index-url': 'file:///a/simple file:///b/simple',
    });
  });
});
