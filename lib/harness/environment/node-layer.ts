/**
 * The Node layer: the tree's `package.json` dependencies and lockfile installed with `npm ci --ignore-scripts`
 * (without a lockfile, `npm install --ignore-scripts --no-package-lock`) in the build sandbox, at the fixed path
 * `NODE_ENV_TARGET`; its `node_modules` is later bound read-only at the workspace's `node_modules` (where node's
 * resolution finds it) and its `.bin` put on PATH. Any copy of the project's own package (by `name`, also nested in a
 * dependency's `node_modules`) is removed afterwards, replaced by a relative link to the workspace root (so a
 * dependency that requires the project gets the code under test), and recorded.
 */
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { SandboxEnvironment } from '../sandbox/sandbox.ts';
import type { BuildRunner } from './build-runner.ts';
import { ENTRY_MARKER } from './build-lock.ts';
import { EnvironmentBuildError } from './environment-errors.ts';
import { ENVIRONMENT_RECIPE_VERSION, layerKey } from './environment-key.ts';
import { ENVIRONMENT_MANIFEST_VERSION, type EnvironmentManifest, type InstalledPackage, type RemovedPackage } from './environment-manifest.ts';
import type { NodePlan } from './node-manifest.ts';
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

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  const st = await lstat(path).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Package folders under a node_modules folder (scoped ones included), not following symlinks. */
async function packageDirs(nodeModules: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of (await readdir(nodeModules).catch(() => [] as string[])).sort()) {
    if (name.startsWith('.')) continue;
    const path = join(nodeModules, name);
    const st = await lstat(path).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    if (name.startsWith('@')) {
      for (const scoped of (await readdir(path).catch(() => [] as string[])).sort()) {
        const p = join(path, scoped);
        if ((await lstat(p).catch(() => undefined))?.isDirectory()) out.push(p);
      }
    } else out.push(path);
  }
  return out;
}

/** Every installed package (nested ones too), and removes copies of `projectName`. */
export async function removeProjectPackages(layer: string, projectName: string | undefined): Promise<{ installed: InstalledPackage[]; removed: RemovedPackage[] }> {
  const installed: InstalledPackage[] = [];
  const removed: RemovedPackage[] = [];
  const walk = async (nodeModules: string): Promise<void> => {
    for (const dir of await packageDirs(nodeModules)) {
      const pkg = await readJson(join(dir, 'package.json'));
      const name = typeof pkg?.['name'] === 'string' ? pkg['name'] : relative(nodeModules, dir);
      const version = typeof pkg?.['version'] === 'string' ? pkg['version'] : '';
      // Installed under the project's name (npm aliases put it under another folder name, but `name` tells).
      if (projectName && (name === projectName || relative(nodeModules, dir) === projectName)) {
        await rm(dir, { recursive: true, force: true });
        // A dependency that requires the project gets the workspace's own copy: node_modules is bound at the
        // workspace's node_modules, so the layer's root stands for the workspace root.
        await symlink(relative(dirname(dir), layer) || '.', dir);
        removed.push({ name, version, path: relative(layer, dir), reason: `its name is the project's (${projectName}); linked to the workspace` });
        continue;
      }
      installed.push({ name, version });
      await walk(join(dir, 'node_modules'));
    }
  };
  const top = join(layer, 'node_modules');
  await walk(top);
  if (removed.length > 0) {
    // Bin links that pointed into a removed package.
    for (const binDir of [join(top, '.bin')]) {
      for (const name of await readdir(binDir).catch(() => [] as string[])) {
        const link = join(binDir, name);
        const target = await readlink(link).catch(() => undefined);
        if (!target) continue;
        const abs = resolve(dirname(link), target);
        if (removed.some((r) => abs.startsWith(`${join(layer, r.path)}${sep}`))) await rm(link, { force: true });
      }
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
  await rm(join(layer, '.flywheel-output'), { force: true });
  await mkdir(join(layer, 'node_modules'), { recursive: true });
  const { installed, removed } = await removeProjectPackages(layer, plan.projectName);
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
