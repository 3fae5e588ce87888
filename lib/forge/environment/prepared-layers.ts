/**
 * A local checkout's prepared dependencies, used instead of a network install: an untracked `node_modules` (a folder,
 * or a symlink to one elsewhere, followed) or virtualenv (`.venv`, `venv`) that the forge's git copy drops. Each is
 * copied once into the harness's environment cache under the very key the resolver computes for the tree
 * (`CachedEnvironmentResolver.plan`), as a layer like the ones it builds: the project's own package taken out (a
 * release of the code under test, an editable install pointing at the checkout), sealed read-only, and an `env.json`
 * that says where it came from (`preparedFrom`). So every sandbox that resolves this tree on this machine — the
 * baseline, each certification, the oracle's grading, and a later `flywheel eval run` of the forged tasks — finds the
 * same environment, and none installs anything. An entry already cached under that key (built from the lockfile, or
 * seeded by an earlier run) is kept: the cache is keyed by the install plan, and the first layer of a key wins.
 */
import { execFile } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ENTRY_MARKER, ensureEntry } from '../../harness/environment/build-lock.ts';
import type { EnvironmentPlan } from '../../harness/environment/cached-environments.ts';
import type { EnvironmentRequest } from '../../harness/environment/environment-resolver.ts';
import { ENVIRONMENT_RECIPE_VERSION } from '../../harness/environment/environment-key.ts';
import { ENVIRONMENT_MANIFEST_VERSION, type EnvironmentManifest, type InstalledPackage, type RemovedPackage } from '../../harness/environment/environment-manifest.ts';
import { sealLayer } from '../../harness/environment/layer-fs.ts';
import { installPackageJson, NODE_ENV_TARGET, removeProjectPackages } from '../../harness/environment/node-layer.ts';
import { PYTHON_ENV_TARGET, removeProjectDistributions } from '../../harness/environment/python-layer.ts';

const execFileAsync = promisify(execFile);

/** A manifest of a layer copied from a checkout: where from, and when that folder last changed. */
export interface PreparedManifest extends EnvironmentManifest {
  preparedFrom?: string;
  /** The copied folder's change stamp (`preparedStamp`): a later install in the checkout changes it. */
  preparedStamp?: string;
}

/**
 * When a prepared folder last changed: the latest change time of the folder, its package folder and the files an
 * install rewrites (npm's `.package-lock.json`, pnpm's `.modules.yaml`, a venv's `site-packages`).
 *
 * @example
 * await preparedStamp('/src/kit/node_modules') // '1733331200000.123'
 */
export async function preparedStamp(folder: string): Promise<string> {
  const real = await realpath(folder).catch(() => folder);
  const paths = [real, join(real, '.package-lock.json'), join(real, '.modules.yaml'), join(real, 'pyvenv.cfg')];
  for (const e of await readdir(join(real, 'lib'), { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory() && e.name.startsWith('python')) paths.push(join(real, 'lib', e.name, 'site-packages'));
  }
  let latest = 0;
  for (const p of paths) latest = Math.max(latest, (await stat(p).catch(() => undefined))?.ctimeMs ?? 0);
  return String(latest);
}

/** A note when the cached layer was copied from this folder and the folder changed since (the copy is kept). */
async function staleNote(entryDir: string, folder: string, kind: string): Promise<string | undefined> {
  const manifest = await readFile(join(entryDir, ENTRY_MARKER), 'utf8').then((t) => JSON.parse(t) as PreparedManifest, () => undefined);
  if (!manifest?.preparedFrom || !manifest.preparedStamp) return undefined;
  if (manifest.preparedFrom !== folder && !manifest.preparedFrom.startsWith(`${folder} -> `)) return undefined;
  if (manifest.preparedStamp === (await preparedStamp(folder))) return undefined;
  return `the checkout's ${folder} changed after it was copied into ${kind} layer ${manifest.key}: the earlier copy is used (its lockfile inputs are unchanged); remove ${entryDir} to copy it again`;
}

/** What seeding needs of the resolver: its cache folder and its plan (the CachedEnvironmentResolver has both). */
export interface LayerCache {
  readonly cacheDir: string;
  plan(request: EnvironmentRequest): Promise<EnvironmentPlan>;
}

export interface PreparedFolders {
  /** The checkout's node_modules as found (its real folder is copied). */
  node?: string;
  /** The checkout's virtualenv. */
  python?: string;
}

export interface SeedOutcome {
  /** Layers this call copied into the cache. */
  seeded: Array<{ kind: 'python' | 'node'; key: string; from: string }>;
  notes: string[];
}

const exists = (path: string) => stat(path).then(() => true, () => false);
const isFolder = (path: string) => stat(path).then((s) => s.isDirectory(), () => false);

/**
 * The prepared dependency folders of a checkout that git does not track.
 *
 * @example
 * await findPreparedFolders('/src/url-kit', trackedPaths) // { node: '/src/url-kit/node_modules' }
 */
export async function findPreparedFolders(checkout: string, isTracked: (rel: string) => Promise<boolean>): Promise<PreparedFolders> {
  const out: PreparedFolders = {};
  const nodeModules = join(checkout, 'node_modules');
  if ((await isFolder(nodeModules)) && !(await isTracked('node_modules'))) out.node = nodeModules;
  for (const name of ['.venv', 'venv']) {
    const venv = join(checkout, name);
    if ((await exists(join(venv, 'pyvenv.cfg'))) && !(await isTracked(name))) {
      out.python = venv;
      break;
    }
  }
  return out;
}

type LayerPackages = { installed: InstalledPackage[]; removed: RemovedPackage[] };

/** Takes the project's own installed copy out of a seeded layer (as the harness does after a build), then seals it. */
async function withoutProjectCopy(layer: string, what: string, remove: () => Promise<LayerPackages>): Promise<{ packages: LayerPackages; own: string[] }> {
  const own: string[] = [];
  let packages: LayerPackages = { installed: [], removed: [] };
  try {
    packages = await remove();
  } catch (error) {
    own.push(`the project's own ${what} could not be looked for (${(error as Error).message}); the leak probe searches the copy`);
  }
  await sealLayer(layer);
  return { packages, own };
}

async function copyTree(source: string, target: string): Promise<void> {
  // -a keeps the tree's own symlinks as links (relative ones inside node_modules stay valid where it is bound).
  await execFileAsync('cp', ['-a', '--reflink=auto', '--', source, target], { maxBuffer: 1 << 20 });
}

function manifestOf(input: {
  kind: 'python' | 'node';
  key: string;
  target: string;
  toolchain: Record<string, unknown>;
  inputs: string[];
  project: { names: string[]; topLevel: string[] };
  preparedFrom: string;
  installed: InstalledPackage[];
  removed: RemovedPackage[];
  notes: string[];
  started: number;
  stamp: string;
}): PreparedManifest {
  return {
    schemaVersion: ENVIRONMENT_MANIFEST_VERSION,
    kind: input.kind,
    key: input.key,
    recipeVersion: ENVIRONMENT_RECIPE_VERSION,
    target: input.target,
    toolchain: input.toolchain,
    packageSource: { preparedCopy: input.preparedFrom },
    inputs: input.inputs,
    requested: [`prepared copy of ${input.preparedFrom}`],
    skipped: [],
    project: input.project,
    installed: input.installed,
    removed: input.removed,
    notes: [`copied from the checkout's prepared ${input.kind === 'node' ? 'node_modules' : 'virtualenv'} ${input.preparedFrom} (untracked): not installed from the lockfile`, ...input.notes],
    builtAt: new Date().toISOString(),
    buildMs: Date.now() - input.started,
    preparedFrom: input.preparedFrom,
    preparedStamp: input.stamp,
  };
}

async function seedNode(cache: LayerCache, plan: NonNullable<EnvironmentPlan['node']>, folder: string, notes: string[]): Promise<void> {
  const real = await realpath(folder);
  await ensureEntry(cache.cacheDir, plan.key, async (tmp) => {
    const started = Date.now();
    const stamp = await preparedStamp(folder);
    const layer = join(tmp, 'layer');
    await mkdir(layer, { recursive: true });
    await copyTree(real, join(layer, 'node_modules'));
    await writeFile(join(layer, 'package.json'), installPackageJson(plan.input.plan.packageJson));
    const { packages, own } = await withoutProjectCopy(layer, 'package', () => removeProjectPackages(layer, plan.input.plan.projectName));
    const toolchain = plan.input.toolchain;
    const manifest = manifestOf({
      kind: 'node',
      key: plan.key,
      target: NODE_ENV_TARGET,
      toolchain: { node: toolchain.version, npm: toolchain.npmVersion ?? null, executable: toolchain.executable },
      inputs: plan.input.plan.files,
      project: { names: plan.input.plan.projectName ? [plan.input.plan.projectName] : [], topLevel: [] },
      preparedFrom: folder === real ? folder : `${folder} -> ${real}`,
      ...packages,
      notes: own,
      started,
      stamp,
    });
    await writeFile(join(tmp, ENTRY_MARKER), `${JSON.stringify(manifest, null, 2)}\n`);
  }, { waitMs: 30 * 60_000 });
  notes.push(`node layer ${plan.key}: copied from the checkout's ${folder}${folder === real ? '' : ` (-> ${real})`}`);
}

/** `version` / `version_info` of a pyvenv.cfg, as major.minor. */
function venvVersion(cfg: string): string | undefined {
  const m = /^\s*(?:version|version_info)\s*=\s*(\d+)\.(\d+)/m.exec(cfg);
  return m ? `${m[1]}.${m[2]}` : undefined;
}

/** Why a virtualenv cannot serve as the layer (another python, an interpreter the sandbox cannot see), if it cannot. */
async function venvProblem(venv: string, toolchain: { version: string; prefix: string }): Promise<string | undefined> {
  const cfg = await readFile(join(venv, 'pyvenv.cfg'), 'utf8').catch(() => '');
  const version = venvVersion(cfg);
  const want = toolchain.version.split('.').slice(0, 2).join('.');
  if (version !== want) return `it is for python ${version ?? '(unknown)'}, the sandbox runs python ${want}`;
  if (!(await isFolder(join(venv, 'lib', `python${want}`, 'site-packages')))) return `it has no lib/python${want}/site-packages`;
  const interpreter = await realpath(join(venv, 'bin', 'python')).catch(() => undefined);
  if (!interpreter) return 'its bin/python does not resolve';
  const visible = [toolchain.prefix, '/usr'].some((p) => interpreter === p || interpreter.startsWith(`${p}/`));
  return visible ? undefined : `its interpreter ${interpreter} is outside the toolchain the sandbox shows (${toolchain.prefix})`;
}

/** Scripts and activation files name the venv's absolute path: the layer's own path replaces it. */
async function relocateVenv(layer: string, oldPaths: string[]): Promise<void> {
  const files = [join(layer, 'pyvenv.cfg')];
  for (const e of await readdir(join(layer, 'bin'), { withFileTypes: true }).catch(() => [])) if (e.isFile()) files.push(join(layer, 'bin', e.name));
  for (const file of files) {
    const st = await lstat(file).catch(() => undefined);
    if (!st?.isFile() || st.size > 1 << 20) continue;
    const text = await readFile(file, 'latin1');
    let next = text;
    for (const old of oldPaths) next = next.split(old).join(PYTHON_ENV_TARGET);
    if (next !== text) await writeFile(file, next, 'latin1');
  }
}

/** Seeds the python layer from the venv; false (with a note) when the venv cannot serve. */
async function seedPython(cache: LayerCache, plan: NonNullable<EnvironmentPlan['python']>, venv: string, notes: string[]): Promise<boolean> {
  const real = await realpath(venv);
  const problem = await venvProblem(real, plan.input.toolchain);
  if (problem) {
    notes.push(`the checkout's virtualenv ${venv} is not used: ${problem}`);
    return false;
  }
  await ensureEntry(cache.cacheDir, plan.key, async (tmp) => {
    const started = Date.now();
    const stamp = await preparedStamp(venv);
    const layer = join(tmp, 'layer');
    await copyTree(real, layer);
    await relocateVenv(layer, [...new Set([real, venv])]);
    const { packages, own } = await withoutProjectCopy(layer, 'distribution', () => removeProjectDistributions(layer, plan.input.plan));
    const toolchain = plan.input.toolchain;
    const manifest = manifestOf({
      kind: 'python',
      key: plan.key,
      target: PYTHON_ENV_TARGET,
      toolchain: { python: toolchain.version, executable: toolchain.executable, prefix: toolchain.prefix },
      inputs: plan.input.plan.files,
      project: { names: plan.input.plan.projectNames, topLevel: plan.input.plan.topLevel },
      preparedFrom: venv === real ? venv : `${venv} -> ${real}`,
      ...packages,
      notes: own,
      started,
      stamp,
    });
    await writeFile(join(tmp, ENTRY_MARKER), `${JSON.stringify(manifest, null, 2)}\n`);
  }, { waitMs: 30 * 60_000 });
  notes.push(`python layer ${plan.key}: copied from the checkout's ${venv}`);
  return true;
}

/**
 * Copies the checkout's prepared folders into the cache where the resolver will look for this tree's layers.
 *
 * @example
 * await seedPreparedLayers({ cache: provider.environments, treeDir: work.checkoutDir, prepared: { node: '/src/kit/node_modules' } });
 */
export async function seedPreparedLayers(input: { cache: LayerCache; treeDir: string; prepared: PreparedFolders }): Promise<SeedOutcome> {
  const { cache, prepared } = input;
  const out: SeedOutcome = { seeded: [], notes: [] };
  if (!prepared.node && !prepared.python) return out;
  const plan = await cache.plan({ treeDir: input.treeDir });
  const cached = async (key: string) => exists(join(cache.cacheDir, key, ENTRY_MARKER));
  if (prepared.node) {
    if (!plan.node) out.notes.push(`the checkout's ${prepared.node} is not used: the tree has no package.json the environment installs from`);
    else if (await cached(plan.node.key)) {
      out.notes.push(`node layer ${plan.node.key} is already cached; the checkout's ${prepared.node} is not copied again`);
      const stale = await staleNote(join(cache.cacheDir, plan.node.key), prepared.node, 'node');
      if (stale) out.notes.push(stale);
    }
    else {
      await seedNode(cache, plan.node, prepared.node, out.notes);
      out.seeded.push({ kind: 'node', key: plan.node.key, from: prepared.node });
    }
  }
  if (prepared.python) {
    if (!plan.python) out.notes.push(`the checkout's ${prepared.python} is not used: the tree is not a Python project the environment installs for`);
    else if (await cached(plan.python.key)) {
      out.notes.push(`python layer ${plan.python.key} is already cached; the checkout's ${prepared.python} is not copied again`);
      const stale = await staleNote(join(cache.cacheDir, plan.python.key), prepared.python, 'python');
      if (stale) out.notes.push(stale);
    }
    else {
      if (await seedPython(cache, plan.python, prepared.python, out.notes)) out.seeded.push({ kind: 'python', key: plan.python.key, from: prepared.python });
    }
  }
  return out;
}
