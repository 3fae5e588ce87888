/**
 * The Node layer: the tree's `package.json` dependencies and lockfile installed with `npm ci --ignore-scripts`
 * (without a lockfile, `npm install --ignore-scripts --no-package-lock`) in the build sandbox, at the fixed path
 * `NODE_ENV_TARGET`; its `node_modules` is later bound read-only at the workspace's `node_modules` (where node's
 * resolution finds it) and its `.bin` put on PATH. Any copy of the project's own package (by `name`, also nested in a
 * dependency's `node_modules`) is removed afterwards, replaced by a relative link to the workspace root (so a
 * dependency that requires the project gets the code under test), and recorded. The lockfile can make npm create
 * links anywhere in the layer, so that walk goes through `LayerFs` (`layer-fs.ts`: lstat per component, nothing
 * followed, a symlinked folder on the way refuses the layer), and the layer is sealed (root's, read-only) before it
 * is published.
 */
import { mkdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { SandboxEnvironment } from '../sandbox/sandbox.ts';
import type { BuildRunner } from './build-runner.ts';
import { ENTRY_MARKER } from './build-lock.ts';
import { EnvironmentBuildError } from './environment-errors.ts';
import { ENVIRONMENT_RECIPE_VERSION, layerKey } from './environment-key.ts';
import { ENVIRONMENT_MANIFEST_VERSION, type EnvironmentManifest, type InstalledPackage, type RemovedPackage } from './environment-manifest.ts';
import type { NodePlan } from './node-manifest.ts';
import { LayerFs, sealLayer } from './layer-fs.ts';
import { joinArgs, type PackageSource } from './package-indexes.ts';
import type { NodeToolchain } from './toolchains.ts';

export const NODE_ENV_TARGET = '/opt/flywheel/env/node';

export interface NodeLayerInput {
  plan: NodePlan;
  toolchain: NodeToolchain;
  source: PackageSource;
}

/** The fields of package.json that decide what `npm ci` installs (scripts and the rest do not, and are left out). */
const INSTALL_FIELDS = ['name', 'version', 'dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies', 'peerDependenciesMeta', 'bundleDependencies', 'bundledDependencies', 'overrides', 'workspaces', 'engines', 'os', 'cpu'];

/** package.json reduced to what the install reads (invalid JSON is kept as it is, for npm to name). */
export function installPackageJson(text: string): string {
  try {
    const pkg = JSON.parse(text) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const field of INSTALL_FIELDS) if (pkg[field] !== undefined) out[field] = pkg[field];
    return `${JSON.stringify(out, null, 2)}\n`;
  } catch {
    return text;
  }
}

export function nodeLayerKey(input: NodeLayerInput): string {
  return layerKey('node', {
    node: input.toolchain.version,
    npm: input.toolchain.npmVersion ?? null,
    packageJson: installPackageJson(input.plan.packageJson),
    lockfile: input.plan.lockfile ? { name: input.plan.lockfile.name, text: input.plan.lockfile.text } : null,
    source: input.source.describe,
  });
}

function tail(text: string, lines = 25): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

async function readJson(fs: LayerFs, rel: string): Promise<Record<string, unknown> | undefined> {
  try {
    return JSON.parse(await fs.readText(rel)) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

const refuseLink = { refuseLink: true };

/**
 * Package folders (layer-relative) under a node_modules folder (scoped ones included), not following symlinks: a
 * linked package is not entered, and a node_modules or scope folder that is a link refuses the layer.
 */
async function packageDirs(fs: LayerFs, nodeModules: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await fs.readdir(nodeModules)) {
    if (name.startsWith('.')) continue;
    const path = join(nodeModules, name);
    if (name.startsWith('@')) {
      if (!(await fs.isDir(path, refuseLink))) continue;
      for (const scoped of await fs.readdir(path)) {
        const p = join(path, scoped);
        if (await fs.isDir(p)) out.push(p);
      }
    } else if (await fs.isDir(path)) out.push(path);
  }
  return out;
}

/**
 * Every installed package (nested ones too), and removes copies of `projectName`. Every read and removal goes through
 * `LayerFs` (lstat per component, nothing followed): the lockfile may make npm link any folder anywhere.
 */
export async function removeProjectPackages(layer: string, projectName: string | undefined): Promise<{ installed: InstalledPackage[]; removed: RemovedPackage[] }> {
  const fs = await LayerFs.open(layer);
  const installed: InstalledPackage[] = [];
  const removed: RemovedPackage[] = [];
  const walk = async (nodeModules: string): Promise<void> => {
    for (const dir of await packageDirs(fs, nodeModules)) {
      const pkg = await readJson(fs, join(dir, 'package.json'));
      const name = typeof pkg?.['name'] === 'string' ? pkg['name'] : relative(nodeModules, dir);
      const version = typeof pkg?.['version'] === 'string' ? pkg['version'] : '';
      // Installed under the project's name (npm aliases put it under another folder name, but `name` tells).
      if (projectName && (name === projectName || relative(nodeModules, dir) === projectName)) {
        await fs.remove(dir);
        // A dependency that requires the project gets the workspace's own copy: node_modules is bound at the
        // workspace's node_modules, so the layer's root stands for the workspace root. (symlink() creates the link
        // itself; its parent folders were just checked by remove.)
        const abs = join(fs.root, dir);
        await symlink(relative(dirname(abs), fs.root) || '.', abs);
        removed.push({ name, version, path: dir, reason: `its name is the project's (${projectName}); linked to the workspace` });
        continue;
      }
      installed.push({ name, version });
      await walk(join(dir, 'node_modules'));
    }
  };
  const top = 'node_modules';
  await walk(top);
  if (removed.length > 0) {
    // Bin links that pointed into a removed package.
    const binDir = join(top, '.bin');
    for (const name of await fs.readdir(binDir)) {
      const rel = join(binDir, name);
      if (!(await fs.lstat(rel))?.isSymbolicLink()) continue;
      const link = join(fs.root, rel);
      const target = await readlink(link).catch(() => undefined);
      if (!target) continue;
      const abs = resolve(dirname(link), target);
      if (removed.some((r) => abs.startsWith(`${join(fs.root, r.path)}${sep}`))) await fs.remove(rel);
    }
  }
  installed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { installed, removed };
}

export async function buildNodeLayer(
  entryDir: string,
  input: NodeLayerInput,
  context: { key: string; run: BuildRunner; toolchainEnvironment: SandboxEnvironment; timeoutMs: number; env: Record<string, string> },
): Promise<EnvironmentManifest> {
  const started = Date.now();
  const { toolchain, plan } = input;
  if (!toolchain.npmDir) throw new EnvironmentBuildError(`environment ${context.key}: the tree has package.json but npm was not found beside ${toolchain.executable} or on PATH`, { files: plan.files });
  const layer = join(entryDir, 'layer');
  const inputDir = join(entryDir, 'input');
  await mkdir(layer, { recursive: true });
  await mkdir(inputDir, { recursive: true });
  await writeFile(join(layer, '.flywheel-output'), '');
  await writeFile(join(layer, 'package.json'), installPackageJson(plan.packageJson));
  // The build sandbox's workspace: what the build reads, for the record (npm runs in the bound layer).
  await writeFile(join(inputDir, 'package.json'), installPackageJson(plan.packageJson));
  if (plan.lockfile) await writeFile(join(layer, plan.lockfile.name), plan.lockfile.text);
  const npm = `${joinArgs([toolchain.executable, join(toolchain.npmDir, 'bin', 'npm-cli.js')])}`;
  const common = `--ignore-scripts --no-audit --no-fund --cache=/tmp/fw-npm-cache ${joinArgs(input.source.args)}`;
  const script = [
    'set -e',
    `cd ${NODE_ENV_TARGET}`,
    'rm -f .flywheel-output',
    // The sandbox's egress proxy, said to npm in its own words too.
    'if [ -n "${HTTPS_PROXY:-}" ]; then export npm_config_https_proxy="$HTTPS_PROXY" npm_config_proxy="${HTTP_PROXY:-$HTTPS_PROXY}"; fi',
    plan.lockfile ? `${npm} ci ${common}` : `${npm} install --no-package-lock ${common}`,
  ].join('\n');
  const result = await context.run({
    label: 'node',
    inputDir,
    outputs: [{ source: layer, target: NODE_ENV_TARGET }],
    environment: context.toolchainEnvironment,
    allowHosts: input.source.allowHosts,
    env: { ...context.env, npm_config_update_notifier: 'false', npm_config_userconfig: '/tmp/fw-npmrc', npm_config_globalconfig: '/tmp/fw-npmrc-global' },
    script,
    timeoutMs: context.timeoutMs,
  });
  const output = `${result.stdout}\n${result.stderr}`;
  await writeFile(join(entryDir, 'build.log'), tail(output, 400));
  if (result.exitCode !== 0) {
    const files = plan.lockfile ? [plan.lockfile.name, 'package.json'] : ['package.json'];
    const why = result.limit ? `ran past its ${result.limit} limit` : `exited ${result.exitCode ?? result.signal}`;
    throw new EnvironmentBuildError(`environment ${context.key}: npm ${plan.lockfile ? 'ci' : 'install'} from ${files.join(', ')} ${why}:\n${tail(output)}`, { files, outputTail: tail(output) });
  }
  const fs = await LayerFs.open(layer);
  await fs.remove('.flywheel-output');
  // No node_modules (no dependencies): an empty one, for the workspace bind. A link there refuses the layer.
  const nodeModules = await fs.lstat('node_modules');
  if (!nodeModules) await mkdir(join(fs.root, 'node_modules'));
  else if (!nodeModules.isDirectory()) throw new EnvironmentBuildError(`environment ${context.key}: the built layer's node_modules is not a folder${nodeModules.isSymbolicLink() ? ' (a symlink)' : ''}`);
  const { installed, removed } = await removeProjectPackages(layer, plan.projectName);
  // Before it is published: root's and read-only, so no later sandbox (its user built it) can change it.
  await sealLayer(layer);
  const manifest: EnvironmentManifest = {
    schemaVersion: ENVIRONMENT_MANIFEST_VERSION,
    kind: 'node',
    key: context.key,
    recipeVersion: ENVIRONMENT_RECIPE_VERSION,
    target: NODE_ENV_TARGET,
    toolchain: { node: toolchain.version, npm: toolchain.npmVersion ?? null, executable: toolchain.executable },
    packageSource: input.source.describe,
    inputs: plan.files,
    requested: [plan.lockfile ? `npm ci (${plan.lockfile.name})` : 'npm install (no lockfile)'],
    skipped: [],
    project: { names: plan.projectName ? [plan.projectName] : [], topLevel: [] },
    installed,
    removed,
    notes: plan.lockfile ? [] : ['no lockfile: versions resolved at build time'],
    builtAt: new Date().toISOString(),
    buildMs: Date.now() - started,
  };
  await rm(inputDir, { recursive: true, force: true });
  await writeFile(join(entryDir, ENTRY_MARKER), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
