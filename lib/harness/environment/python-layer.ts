/**
 * The Python layer: a virtualenv (no system site packages) at the fixed in-sandbox path `PYTHON_ENV_TARGET`, holding
 * pytest (pinned to the host interpreter's version, for reproducible verdicts, when the index has it) and the tree's
 * declared requirements, never the project itself. Built by `pip` inside the build sandbox; afterwards the installed
 * distributions are read from their `*.dist-info` / `*.egg-info` folders on the host (files only, nothing of the
 * layer runs) and any that provides the project's name or one of its top-level packages is removed and recorded.
 * The build's code wrote the layer, so those reads and removals go through `LayerFs` (`layer-fs.ts`): lstat per path
 * component, no symlink ever followed, a symlinked folder on the way refuses the layer; the layer is then sealed
 * (root's, read-only) before it is published.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SandboxEnvironment } from '../sandbox/sandbox.ts';
import type { BuildRunner } from './build-runner.ts';
import { ENTRY_MARKER } from './build-lock.ts';
import { EnvironmentBuildError } from './environment-errors.ts';
import { ENVIRONMENT_RECIPE_VERSION, layerKey } from './environment-key.ts';
import { ENVIRONMENT_MANIFEST_VERSION, type EnvironmentManifest, type InstalledPackage, type RemovedPackage } from './environment-manifest.ts';
import { LayerFs, sealLayer } from './layer-fs.ts';
import { joinArgs, type PackageSource } from './package-indexes.ts';
import { normalizeDistName, type PythonPlan } from './python-manifest.ts';
import type { PythonToolchain } from './toolchains.ts';

/** Where the virtualenv lives inside every sandbox (venvs hold absolute paths, so it is built there too). */
export const PYTHON_ENV_TARGET = '/opt/flywheel/env/python';
const REQUIREMENTS_FILE = 'requirements.flywheel.txt';

export interface PythonLayerInput {
  plan: PythonPlan;
  toolchain: PythonToolchain;
  source: PackageSource;
}

/** The pytest requirement added to the plan: the host's version, unless the tree asks for pytest itself. */
export function pytestSpec(input: PythonLayerInput): string | undefined {
  if (input.plan.requirements.some((r) => r.name === 'pytest')) return undefined;
  return input.toolchain.pytestVersion ? `pytest==${input.toolchain.pytestVersion}` : 'pytest';
}

export function pythonLayerKey(input: PythonLayerInput): string {
  return layerKey('python', {
    python: { version: input.toolchain.fullVersion, executable: input.toolchain.executable },
    requirements: input.plan.requirements.map((r) => r.spec),
    pytest: pytestSpec(input) ?? null,
    project: { names: input.plan.projectNames, topLevel: input.plan.topLevel },
    source: input.source.describe,
  });
}

function buildScript(input: PythonLayerInput): string {
  const python = input.toolchain.executable;
  const pin = pytestSpec(input);
  const index = joinArgs(input.source.args);
  return [
    'set -e',
    `T=${PYTHON_ENV_TARGET}`,
    `${joinArgs([python])} -m venv "$T"`,
    pin
      ? [
          `PYTEST=${joinArgs([pin])}`,
          // The host's pytest may be newer than the index: then the index's newest, said in the manifest's notes.
          `if [ "$PYTEST" != pytest ] && ! "$T/bin/python" -m pip download --no-deps -q -d /tmp/fw-pytest-probe ${index} "$PYTEST" >/dev/null 2>&1; then echo "FLYWHEEL-NOTE: $PYTEST is not on the package index; installed the newest pytest it has"; PYTEST=pytest; fi`,
        ].join('\n')
      : 'PYTEST=',
    `"$T/bin/python" -m pip install --no-input ${index} $PYTEST -r ${REQUIREMENTS_FILE}`,
  ].join('\n');
}

/** The requirement files a failed pip run names (the requirements it mentions), else every input. */
function failingFiles(plan: PythonPlan, output: string): string[] {
  const text = output.toLowerCase();
  const named = plan.requirements.filter((r) => text.includes(r.name) || text.includes(r.spec.toLowerCase().split(/[;\s]/)[0]!)).map((r) => r.from);
  return [...new Set(named.length > 0 ? named : plan.files)];
}

function tail(text: string, lines = 25): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

interface Distribution extends InstalledPackage {
  /** Its metadata folder, relative to the layer. */
  metaDir: string;
  topLevel: string[];
  /** Files it installed, relative to site-packages (from RECORD / installed-files.txt). */
  files: string[];
}

const refuseLink = { refuseLink: true };

/**
 * The distributions in a site-packages folder (`site`, relative to the layer), read from their metadata files
 * through `fs` (no symlink followed: a metadata folder that is a link refuses the layer).
 */
export async function listDistributions(fs: LayerFs, site: string): Promise<Distribution[]> {
  const out: Distribution[] = [];
  for (const name of await fs.readdir(site)) {
    const isDist = name.endsWith('.dist-info');
    if (!isDist && !name.endsWith('.egg-info')) continue;
    const metaDir = join(site, name);
    // A metadata folder is read: a link there (to a host folder) refuses the layer. An egg-info may be a plain file.
    await fs.isDir(metaDir, refuseLink);
    const meta = await fs.readText(join(metaDir, isDist ? 'METADATA' : 'PKG-INFO'));
    const distName = /^Name:\s*(.+)$/m.exec(meta)?.[1]?.trim() ?? name.replace(/-[^-]*\.(dist|egg)-info$/, '');
    const version = /^Version:\s*(.+)$/m.exec(meta)?.[1]?.trim() ?? '';
    const record = isDist ? await fs.readText(join(metaDir, 'RECORD')) : await fs.readText(join(metaDir, 'installed-files.txt'));
    const files = record.split('\n').map((l) => (isDist ? l.split(',')[0]! : l).trim()).filter(Boolean);
    const declared = (await fs.readText(join(metaDir, 'top_level.txt'))).split('\n').map((l) => l.trim()).filter(Boolean);
    const fromFiles = files
      .filter((f) => !f.startsWith('..') && !f.includes('.dist-info/') && !f.includes('.egg-info/'))
      .map((f) => f.split('/')[0]!.replace(/\.(py|pyc|so|pyd)$/, '').replace(/\.cpython-.*$/, ''))
      .filter((f) => f && f !== '__pycache__' && !f.endsWith('.pth'));
    out.push({ name: distName, version, metaDir, topLevel: [...new Set([...declared, ...fromFiles])].sort(), files });
  }
  return out;
}

/** The venv's site-packages, relative to the layer (`lib`, `lib/pythonX.Y` and it must be real folders, not links). */
async function sitePackagesOf(fs: LayerFs, layer: string): Promise<string> {
  const versions = (await fs.readdir('lib')).filter((n) => /^python\d/.test(n));
  if (versions.length !== 1) throw new EnvironmentBuildError(`the virtualenv at ${layer} has ${versions.length} lib/python* folders (expected one)`);
  const site = join('lib', versions[0]!, 'site-packages');
  await fs.isDir(site, refuseLink);
  return site;
}

/**
 * Removes every distribution that provides the project; returns what was removed. Every read and removal goes
 * through `LayerFs` (lstat per component): a symlinked folder on the way refuses the layer, nothing is followed.
 */
export async function removeProjectDistributions(layer: string, plan: Pick<PythonPlan, 'projectNames' | 'topLevel'>): Promise<{ installed: InstalledPackage[]; removed: RemovedPackage[] }> {
  const fs = await LayerFs.open(layer);
  const site = await sitePackagesOf(fs, layer);
  const names = new Set(plan.projectNames.map(normalizeDistName));
  const tops = new Set(plan.topLevel);
  const dists = await listDistributions(fs, site);
  const removed: RemovedPackage[] = [];
  const siteAbs = join(fs.root, site);
  for (const dist of dists) {
    const byName = names.has(normalizeDistName(dist.name));
    const overlap = dist.topLevel.filter((t) => tops.has(t));
    if (!byName && overlap.length === 0) continue;
    const paths = new Set<string>();
    for (const f of dist.files) paths.add(join(siteAbs, f));
    // An egg-info without a file list: its top-level packages.
    if (dist.files.length === 0) for (const t of dist.topLevel) paths.add(join(siteAbs, t)).add(join(siteAbs, `${t}.py`));
    for (const p of paths) {
      const rel = fs.relative(p);
      if (rel !== undefined) await fs.remove(rel);
    }
    await fs.remove(dist.metaDir);
    for (const t of dist.topLevel) {
      const rel = fs.relative(join(siteAbs, t));
      // Package folders left with only caches are removed too.
      if (rel === undefined || !(await fs.isDir(rel))) continue;
      const rest = await fs.readdir(rel);
      if (rest.every((n) => n === '__pycache__')) await fs.remove(rel);
    }
    removed.push({
      name: dist.name,
      version: dist.version,
      path: dist.metaDir,
      reason: byName ? `its name is the project's (${dist.name})` : `it provides the project's top-level package${overlap.length > 1 ? 's' : ''} ${overlap.join(', ')}`,
    });
  }
  const installed = dists.filter((d) => !removed.some((r) => r.path === d.metaDir)).map((d) => ({ name: d.name, version: d.version }));
  return { installed, removed };
}

/**
 * Builds the layer into `entryDir` (`layer/` the venv, `env.json` the manifest, `build.log` the output's tail).
 */
export async function buildPythonLayer(
  entryDir: string,
  input: PythonLayerInput,
  context: { key: string; run: BuildRunner; toolchainEnvironment: SandboxEnvironment; timeoutMs: number; env: Record<string, string> },
): Promise<EnvironmentManifest> {
  const started = Date.now();
  const layer = join(entryDir, 'layer');
  const inputDir = join(entryDir, 'input');
  await mkdir(layer, { recursive: true });
  await mkdir(inputDir, { recursive: true });
  await writeFile(join(layer, '.flywheel-output'), '');
  await writeFile(join(inputDir, REQUIREMENTS_FILE), input.plan.requirements.map((r) => `${r.spec}\n`).join(''));
  const result = await context.run({
    label: 'python',
    inputDir,
    outputs: [{ source: layer, target: PYTHON_ENV_TARGET }],
    environment: context.toolchainEnvironment,
    allowHosts: input.source.allowHosts,
    env: {
      ...context.env,
      PIP_CONFIG_FILE: '/dev/null',
      PIP_NO_INPUT: '1',
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
      PIP_RETRIES: '1',
      PIP_NO_CACHE_DIR: '1',
      PYTHONNOUSERSITE: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    },
    script: buildScript(input),
    timeoutMs: context.timeoutMs,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  await writeFile(join(entryDir, 'build.log'), tail(output, 400));
  if (result.exitCode !== 0) {
    const files = failingFiles(input.plan, output);
    const why = result.limit ? `ran past its ${result.limit} limit` : `exited ${result.exitCode ?? result.signal}`;
    throw new EnvironmentBuildError(`environment ${context.key}: pip install from ${files.join(', ') || 'the tree'} ${why}:\n${tail(output)}`, { files, outputTail: tail(output) });
  }
  await (await LayerFs.open(layer)).remove('.flywheel-output');
  const { installed, removed } = await removeProjectDistributions(layer, input.plan);
  // Before it is published: root's and read-only, so no later sandbox (its user built it) can change it.
  await sealLayer(layer);
  const manifest: EnvironmentManifest = {
    schemaVersion: ENVIRONMENT_MANIFEST_VERSION,
    kind: 'python',
    key: context.key,
    recipeVersion: ENVIRONMENT_RECIPE_VERSION,
    target: PYTHON_ENV_TARGET,
    toolchain: { python: input.toolchain.version, executable: input.toolchain.executable, prefix: input.toolchain.prefix },
    packageSource: input.source.describe,
    inputs: input.plan.files,
    requested: [...(pytestSpec(input) ? [pytestSpec(input)!] : []), ...input.plan.requirements.map((r) => r.spec)],
    skipped: input.plan.skipped,
    project: { names: input.plan.projectNames, topLevel: input.plan.topLevel },
    installed,
    removed,
    notes: output.split('\n').filter((l) => l.startsWith('FLYWHEEL-NOTE: ')).map((l) => l.slice('FLYWHEEL-NOTE: '.length)),
    builtAt: new Date().toISOString(),
    buildMs: Date.now() - started,
  };
  await rm(inputDir, { recursive: true, force: true });
  await writeFile(join(entryDir, ENTRY_MARKER), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
