/**
 * The environment a task's commands run against, built from the task's base tree and cached by its lockfiles:
 *
 * - **Toolchains** (`toolchains.ts`): the host's python3 (pyenv shims followed to the real prefix) and Node, each
 *   prefix bound read-only at its own path, the interpreter's own `site-packages` / `dist-packages` / user site
 *   covered, so nothing the host installed is importable inside.
 * - **Python layer** (`python-layer.ts`) when the tree is a Python project: a virtualenv at `/opt/flywheel/env/python`
 *   with pytest and the tree's declared requirements (`python-manifest.ts`), never the project.
 * - **Node layer** (`node-layer.ts`) when the tree has package.json and ships no node_modules: `npm ci
 *   --ignore-scripts` into a `node_modules` bound at the workspace's `node_modules`.
 *
 * Each layer is a cache entry `<cacheDir>/<kind>-<sha256 of recipe, toolchain, install plan>` (`environment-key.ts`),
 * built once whoever asks (`build-lock.ts`: in-process sharing, a lock file across processes, atomic rename), in a
 * strict build sandbox that reaches only the package indexes (`build-runner.ts`, `package-indexes.ts`). After a build
 * any installed copy of the package under test is removed and listed in the layer's `env.json`.
 *
 * A failed build throws `Flywheel.EnvironmentBuildError` (`ENVIRONMENT_BUILD_ERROR`), naming the tree's file it was
 * installing from: an infrastructure error of the attempt, not the model's failure.
 *
 * @example
 * const resolver = new CachedEnvironmentResolver({ cacheDir: '/var/cache/flywheel-envs' });
 * const env = await resolver.resolve({ treeDir }); // env.binds, env.masks, env.pathDirs, env.manifests[0].installed
 */
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import type { SandboxEnvironment, SandboxProvider } from '../sandbox/sandbox.ts';
import type { EnvironmentRequest, EnvironmentResolver } from './environment-resolver.ts';
import { ensureEntry } from './build-lock.ts';
import { processBuildRunner, sandboxBuildRunner, type BuildRunner } from './build-runner.ts';
import { EnvironmentBuildError } from './environment-errors.ts';
import { environmentId } from './environment-key.ts';
import { readEnvironmentManifest, type EnvironmentManifest } from './environment-manifest.ts';
import { buildNodeLayer, NODE_ENV_TARGET, nodeLayerKey, type NodeLayerInput } from './node-layer.ts';
import { readNodePlan } from './node-manifest.ts';
import { npmSource, pipSource, trustedCaFiles, type PackageSource } from './package-indexes.ts';
import { buildPythonLayer, PYTHON_ENV_TARGET, pythonLayerKey, type PythonLayerInput } from './python-layer.ts';
import { readPythonPlan } from './python-manifest.ts';
import { detectNode, detectPython, toolchainExposure, type Toolchains } from './toolchains.ts';

export { ENVIRONMENT_BUILD_ERROR, EnvironmentBuildError, isEnvironmentBuildError } from './environment-errors.ts';
export { NODE_ENV_TARGET } from './node-layer.ts';
export { PYTHON_ENV_TARGET } from './python-layer.ts';

export interface CachedEnvironmentOptions {
  /** Where built environments are kept. Default `$TMPDIR/flywheel-envs`. */
  cacheDir?: string;
  /**
   * Where builds run. Default `'sandbox'`: a strict sandbox of the provider `buildSandbox` makes, rooted at
   * `sandboxRoot` (the environment is given explicitly, so that provider's own resolver is never asked). `'process'`:
   * a plain child process in a private mount namespace (trusted trees only). Or any sandbox provider, or a custom runner.
   */
  builder?: 'sandbox' | 'process' | SandboxProvider | BuildRunner;
  /**
   * Makes the build sandbox's provider (for `builder: 'sandbox'`). Given by the sandbox side
   * (`cachedEnvironmentResolver` in `lib/harness/sandbox/namespace-provider.ts`), so this folder depends on the
   * sandbox's interface only and the two form no import cycle.
   */
  buildSandbox?: (root: string) => SandboxProvider;
  /** Root of the default build sandbox provider (when the harness's provider root is custom). Default `<cacheDir>/.build-sandbox`. */
  sandboxRoot?: string;
  /** One layer build's wall clock; default 20 minutes. */
  buildTimeoutMs?: number;
  /** The PATH toolchains are looked up on; default this process's. */
  pathEnv?: string;
  /**
   * Set when this process runs inside the task's own environment image (the Batch job definition cloned per image
   * sets `FLYWHEEL_ENVIRONMENT_IMAGE`; the default reads it): then the image is the environment, nothing is built,
   * and the interpreters' own packages (the image's, installed for the task at its base commit) are shown, not
   * covered. `false`: always build.
   */
  environmentImage?: string | false;
  /** Told about cache hits and builds (benchmarks and tests count builds with it). */
  onEvent?: (event: EnvironmentEvent) => void;
}

export type EnvironmentEvent =
  | { kind: 'build-start'; key: string; layer: 'python' | 'node' }
  | { kind: 'build-done'; key: string; layer: 'python' | 'node'; ms: number }
  | { kind: 'cache-hit'; key: string; layer: 'python' | 'node' };

/** What `plan` finds a tree needs: the toolchains, and each layer's key and inputs. */
export interface EnvironmentPlan {
  toolchains: Toolchains;
  python?: { key: string; input: PythonLayerInput };
  node?: { key: string; input: NodeLayerInput };
}

/** The environment with what its layers hold (their `env.json`), for the attempt record. */
export interface CachedSandboxEnvironment extends SandboxEnvironment {
  manifests: EnvironmentManifest[];
}

export class CachedEnvironmentResolver implements EnvironmentResolver {
  readonly options: CachedEnvironmentOptions;
  readonly cacheDir: string;
  #toolchains: Promise<Toolchains> | undefined;
  #pip: Promise<PackageSource> | undefined;
  #npm: Promise<PackageSource> | undefined;
  #runner: BuildRunner | undefined;

  constructor(options: CachedEnvironmentOptions = {}) {
    this.options = options;
    this.cacheDir = resolvePath(options.cacheDir ?? join(tmpdir(), 'flywheel-envs'));
  }

  /** The host toolchains, detected once. */
  toolchains(): Promise<Toolchains> {
    this.#toolchains ??= (async () => {
      const pathEnv = this.options.pathEnv ?? process.env.PATH ?? '';
      const [python, node] = await Promise.all([detectPython(pathEnv), detectNode(process.execPath, pathEnv)]);
      return { ...(python ? { python } : {}), node };
    })();
    return this.#toolchains;
  }

  #buildRunner(): BuildRunner {
    if (this.#runner) return this.#runner;
    const builder = this.options.builder ?? 'sandbox';
    if (typeof builder === 'function') this.#runner = builder;
    else if (builder === 'process') this.#runner = processBuildRunner();
    else if (builder === 'sandbox') {
      const root = this.options.sandboxRoot ?? join(this.cacheDir, '.build-sandbox');
      const make = this.options.buildSandbox;
      if (!make) {
        throw new EnvironmentBuildError('builder "sandbox" needs buildSandbox (use cachedEnvironmentResolver from lib/harness/sandbox/namespace-sandbox.ts), or give a builder');
      }
      this.#runner = sandboxBuildRunner(async () => make(root));
    } else this.#runner = sandboxBuildRunner(builder);
    return this.#runner;
  }

  /** What a build sandbox shows: the toolchains (package folders covered), the local package indexes, CA bundles. */
  #buildEnvironment(toolchains: Toolchains, source: PackageSource): { environment: SandboxEnvironment; env: Record<string, string> } {
    const exposure = toolchainExposure(toolchains);
    const ca = trustedCaFiles();
    const caDirs = [...new Set(Object.values(ca).map((f) => join(f, '..')))];
    const binds = [...exposure.binds];
    for (const dir of [...source.readDirs, ...caDirs]) if (!binds.some((b) => b.target === dir)) binds.push({ source: dir, target: dir });
    return {
      environment: { id: 'flywheel-build', binds, masks: exposure.masks, pathDirs: exposure.pathDirs, env: { PYTHONNOUSERSITE: '1' } },
      env: { ...ca },
    };
  }

  async #layer(
    layer: 'python' | 'node',
    key: string,
    build: (entryDir: string) => Promise<EnvironmentManifest>,
  ): Promise<{ dir: string; manifest: EnvironmentManifest }> {
    let started = 0;
    const { dir, built } = await ensureEntry(
      this.cacheDir,
      key,
      async (tmp) => {
        started = Date.now();
        this.options.onEvent?.({ kind: 'build-start', key, layer });
        await build(tmp);
      },
      { waitMs: (this.options.buildTimeoutMs ?? 20 * 60_000) * 2 },
    );
    if (built) this.options.onEvent?.({ kind: 'build-done', key, layer, ms: Date.now() - started });
    else this.options.onEvent?.({ kind: 'cache-hit', key, layer });
    return { dir, manifest: await readEnvironmentManifest(dir) };
  }

  /**
   * What `resolve` would build for a tree, without building: each layer's key and install plan.
   *
   * @example
   * const { python } = await resolver.plan({ treeDir }); // python.key 'python-3f1c…', python.input.plan.requirements
   */
  async plan(request: EnvironmentRequest): Promise<EnvironmentPlan> {
    const treeDir = resolvePath(request.treeDir);
    const [toolchains, pythonPlan, nodePlan] = await Promise.all([this.toolchains(), readPythonPlan(treeDir), readNodePlan(treeDir)]);
    const out: EnvironmentPlan = { toolchains };
    const python = toolchains.python;
    if (pythonPlan && !python && pythonPlan.files.length > 0) {
      throw new EnvironmentBuildError(`the tree is a Python project (${pythonPlan.files.join(', ')}) but no python3 was found on PATH`, { files: pythonPlan.files });
    }
    if (pythonPlan && python) {
      this.#pip ??= pipSource(python.executable);
      const input = { plan: pythonPlan, toolchain: python, source: await this.#pip };
      out.python = { key: pythonLayerKey(input), input };
    }
    if (nodePlan && toolchains.node) {
      const node = toolchains.node;
      this.#npm ??= npmSource(node.npmDir ? join(node.npmDir, 'bin', 'npm-cli.js') : undefined, node.executable);
      const input = { plan: nodePlan, toolchain: node, source: await this.#npm };
      out.node = { key: nodeLayerKey(input), input };
    }
    return out;
  }

  /** The environment image this process runs in, if any (see `CachedEnvironmentOptions.environmentImage`). */
  get environmentImage(): string | undefined {
    const option = this.options.environmentImage;
    if (option === false) return undefined;
    return option ?? (process.env['FLYWHEEL_ENVIRONMENT_IMAGE'] || undefined);
  }

  async resolve(request: EnvironmentRequest): Promise<CachedSandboxEnvironment> {
    const image = this.environmentImage;
    if (image) {
      // The task's image is its environment: its interpreters with their own packages, nothing built.
      const toolchains = await this.toolchains();
      const exposure = toolchainExposure(toolchains);
      return {
        id: environmentId({ image, toolchains: { python: toolchains.python?.fullVersion ?? null, pythonPrefix: toolchains.python?.prefix ?? null, node: toolchains.node?.version ?? null } }),
        binds: exposure.binds,
        masks: [],
        pathDirs: exposure.pathDirs,
        env: { FLYWHEEL_ENVIRONMENT_IMAGE: image },
        manifests: [],
      };
    }
    const { toolchains, python, node } = await this.plan(request);
    const exposure = toolchainExposure(toolchains);
    const timeoutMs = this.options.buildTimeoutMs ?? 20 * 60_000;
    const binds = [...exposure.binds];
    const pathDirs: string[] = [];
    const env: Record<string, string> = { PYTHONNOUSERSITE: '1' };
    const workspaceBinds: Array<{ source: string; path: string }> = [];
    const manifests: EnvironmentManifest[] = [];
    const layerKeys: string[] = [];

    if (python) {
      const { key, input } = python;
      const build = this.#buildEnvironment({ python: input.toolchain }, input.source);
      const { dir, manifest } = await this.#layer('python', key, (entry) =>
        buildPythonLayer(entry, input, { key, run: this.#buildRunner(), toolchainEnvironment: build.environment, timeoutMs, env: build.env }),
      );
      binds.push({ source: join(dir, 'layer'), target: PYTHON_ENV_TARGET });
      pathDirs.push(`${PYTHON_ENV_TARGET}/bin`);
      env['VIRTUAL_ENV'] = PYTHON_ENV_TARGET;
      manifests.push(manifest);
      layerKeys.push(key);
    }
    if (node) {
      const { key, input } = node;
      const build = this.#buildEnvironment({ node: input.toolchain }, input.source);
      const { dir, manifest } = await this.#layer('node', key, (entry) =>
        buildNodeLayer(entry, input, { key, run: this.#buildRunner(), toolchainEnvironment: build.environment, timeoutMs, env: build.env }),
      );
      binds.push({ source: join(dir, 'layer'), target: NODE_ENV_TARGET });
      workspaceBinds.push({ source: join(dir, 'layer', 'node_modules'), path: 'node_modules' });
      pathDirs.push(`${NODE_ENV_TARGET}/node_modules/.bin`);
      env['NODE_PATH'] = `${NODE_ENV_TARGET}/node_modules`;
      manifests.push(manifest);
      layerKeys.push(key);
    }
    pathDirs.push(...exposure.pathDirs);
    return {
      id: environmentId({ layers: layerKeys, toolchains: { python: toolchains.python?.fullVersion ?? null, pythonPrefix: toolchains.python?.prefix ?? null, node: toolchains.node?.version ?? null } }),
      binds,
      masks: exposure.masks,
      ...(workspaceBinds.length > 0 ? { workspaceBinds } : {}),
      pathDirs,
      env,
      manifests,
    };
  }
}
