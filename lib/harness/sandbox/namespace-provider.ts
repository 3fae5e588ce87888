/**
 * The namespace sandbox's provider: what its sessions share. It holds the options, computes once what every sandbox
 * binds besides its environment (exposed paths and host interpreters) and the base system, opens sessions (a failed
 * start is closed and reported as a `SandboxSetupError`), materializes workspaces (overlay, remembered when it fails,
 * else a copy), and sweeps attempts left behind by a crashed harness.
 *
 * @example
 * const provider = new NamespaceSandboxProvider({ exposePaths: ['/opt/toolchain'] });
 * await provider.sweep();
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 */
import { execFile } from 'node:child_process';
import { chown, mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CachedEnvironmentResolver, type CachedEnvironmentOptions } from '../environment/cached-environments.ts';
import type { EnvironmentResolver } from '../environment/environment-resolver.ts';
import { createAttemptDir, sweepAttempts } from './attempt-dir.ts';
import { reserveUsed, type AttemptDisk } from './attempt-disk.ts';
import { prepareBaseSystem, type BaseSystem, type SandboxUser } from './base-system.ts';
import { DEFAULT_INTERPRETERS, detectInterpreterExposure, type Exposure } from './expose-interpreters.ts';
import { NamespaceSandboxSession } from './namespace-session.ts';
import type { NamespaceSandboxOptions, SandboxHost } from './namespace-types.ts';
import { within } from './path-within.ts';
import type { SandboxProvider, SandboxSpec } from './sandbox.ts';
import { SandboxSetupError } from './sandbox-errors.ts';
import { copyLayers, mountOverlay } from './workspace-layers.ts';

const execFileAsync = promisify(execFile);

async function bindMount(source: string, target: string): Promise<void> {
  await execFileAsync('mount', ['--bind', source, target]);
}

/**
 * @example
 * const provider = new NamespaceSandboxProvider({ exposePaths: ['/opt/toolchain'] });
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 * const r = await session.exec('git log --oneline');
 * await session.close();
 */
export class NamespaceSandboxProvider implements SandboxProvider, SandboxHost {
  readonly root: string;
  readonly options: NamespaceSandboxOptions;
  /** Who sandboxed commands run as (an environment builder makes its outputs writable for it). */
  readonly user: SandboxUser;
  readonly environments: EnvironmentResolver;
  private overlayWorks: boolean | undefined;
  private exposurePromise: Promise<Exposure> | undefined;
  private basePromise: Promise<BaseSystem> | undefined;

  constructor(options: NamespaceSandboxOptions = {}) {
    this.options = options;
    this.root = resolve(options.root ?? join(tmpdir(), 'flywheel-sandbox'));
    const uid = options.uid ?? 61000;
    this.user = { uid, gid: options.gid ?? uid, name: 'flywheel' };
    this.environments = options.environments ?? cachedEnvironmentResolver();
  }

  /**
   * What every sandbox of this provider binds besides its environment (`exposePaths` plus the detected interpreter
   * prefixes, their package folders masked), computed once.
   */
  exposure(): Promise<Exposure> {
    this.exposurePromise ??= (async () => {
      const choice = this.options.exposeInterpreters ?? true;
      const names = choice === true ? [...DEFAULT_INTERPRETERS] : choice === false ? [] : choice;
      const detected = await detectInterpreterExposure(names);
      const paths = [...detected.paths];
      const binDirs = [...detected.binDirs];
      for (const p of this.options.exposePaths ?? []) {
        if (!isAbsolute(p)) throw new SandboxSetupError(`exposePaths: ${p} is not an absolute path`);
        const dir = resolve(p);
        if (dir === '/' || within(this.root, dir) || within(dir, this.root)) {
          throw new SandboxSetupError(`exposePaths: ${p} would expose the sandbox root (layer cache, other attempts)`);
        }
        if (!paths.includes(dir)) paths.push(dir);
        const bin = join(dir, 'bin');
        if (!binDirs.includes(bin) && (await stat(bin).then((st) => st.isDirectory(), () => false))) binDirs.push(bin);
      }
      for (const p of detected.paths) {
        if (within(this.root, p) || within(p, this.root)) throw new SandboxSetupError(`interpreter prefix ${p} would expose the sandbox root`);
      }
      return { paths, masks: detected.masks, binDirs };
    })();
    return this.exposurePromise;
  }

  /** The base system (curated /etc, git shim, seccomp program), written once under `<root>/base`. */
  baseSystem(): Promise<BaseSystem> {
    this.basePromise ??= prepareBaseSystem(join(this.root, 'base'), this.user);
    this.basePromise.catch(() => {
      this.basePromise = undefined;
    });
    return this.basePromise;
  }

  get attemptsDir(): string {
    return join(this.root, 'attempts');
  }

  async open(spec: SandboxSpec): Promise<NamespaceSandboxSession> {
    const attemptDir = await createAttemptDir(this.attemptsDir);
    const session = new NamespaceSandboxSession(this, spec, attemptDir);
    try {
      await session.start();
    } catch (error) {
      await session.close().catch(() => undefined);
      if (error instanceof SandboxSetupError) throw error;
      throw new SandboxSetupError(`sandbox failed to start: ${(error as Error).message}`, undefined, { cause: error });
    }
    return session;
  }

  /**
   * Removes attempts whose owning process died without closing them (a crashed harness): kills what still runs in
   * their cgroups and removes those, unmounts their workspace and disk, deletes their directory. The forwarder dies
   * when its stdin closes.
   */
  async sweep(): Promise<string[]> {
    return sweepAttempts(this.attemptsDir);
  }

  /** Mounts overlay when allowed (remembering the answer), else copies onto the attempt's disk. */
  async materialize(lowers: string[], disk: AttemptDisk, workdir: string, diskBytes: number): Promise<'overlay' | 'copy'> {
    const choice = this.options.workspace ?? 'auto';
    if (choice !== 'copy' && this.overlayWorks !== false) {
      const ok = await mountOverlay(lowers, disk.upper, disk.work, workdir);
      if (ok) {
        this.overlayWorks = true;
        return 'overlay';
      }
      if (choice === 'overlay') throw new SandboxSetupError('overlay mount failed');
      this.overlayWorks = false;
    }
    // The copy lives on the capped disk too, shown at the workspace path by a bind mount.
    const copy = join(disk.dir, 'ws');
    await copyLayers(lowers, copy);
    await chown(copy, this.user.uid, this.user.gid);
    await reserveUsed(disk, diskBytes);
    await mkdir(workdir, { recursive: true });
    await bindMount(copy, workdir);
    return 'copy';
  }
}

/**
 * The cached environment resolver whose builds run in a strict sandbox of this provider: the default of every
 * `NamespaceSandboxProvider`, and what a caller that resolves environments on its own uses.
 *
 * @example
 * const env = await cachedEnvironmentResolver({ cacheDir: '/var/cache/flywheel-envs' }).resolve({ treeDir });
 */
export function cachedEnvironmentResolver(options: CachedEnvironmentOptions = {}): CachedEnvironmentResolver {
  return new CachedEnvironmentResolver({ buildSandbox: (root) => new NamespaceSandboxProvider({ root }), ...options });
}
