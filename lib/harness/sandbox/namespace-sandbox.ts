/**
 * The sandbox provider built on Linux namespaces: bubblewrap (`/usr/bin/bwrap`, Debian's `bubblewrap`) builds each
 * command's root file system from an allow-list, util-linux (nsenter, setpriv, mount) and cgroups do the rest. Needs
 * root on the host (to mount the workspace, make cgroups and join the strict network namespace); the commands
 * themselves run as an unprivileged uid.
 *
 * Per attempt, once: an overlay workspace over cached read-only layers (copy fallback) whose writable parts live on a
 * size-capped tmpfs with the attempt's /tmp (`attempt-disk.ts`); a cgroup holding every command of the attempt, with
 * memory, process and CPU limits (`attempt-cgroup.ts`); the strict-mode history audit; the task environment
 * (`spec.environment`, or the provider's resolver); in strict mode a network namespace holding only loopback plus a
 * forwarder to the egress proxy.
 *
 * Per command (`sandbox-command.ts`): the root file system holds only the base system (/usr, the root links, a
 * curated /etc: `base-system.ts`), the environment's read-only binds (package folders masked), the workspace, the
 * private /tmp, a minimal /dev and a fresh /proc (its /proc/sys read-only; no /sys). Nothing else of the host exists
 * inside. The command runs as the sandbox uid in a user namespace that maps only that uid (never root), in new pid,
 * ipc, uts and cgroup namespaces, with user namespaces disabled, no capabilities, a seccomp filter
 * (`seccomp-filter.ts`) and a cleared environment; its pid namespace dies with it, background processes included.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants as osConstants, tmpdir } from 'node:os';
import { chown, lstat, mkdir, open, readdir, readFile, realpath, rm, stat, writeFile, constants as fsConstants } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FlywheelError } from '../../errors.ts';
import { CachedEnvironmentResolver } from '../environment/cached-environments.ts';
import type { EnvironmentResolver } from '../environment/environment-resolver.ts';
import { auditHistory, type HistoryAudit } from '../git/audit-history.ts';
import { git } from '../git/run-git.ts';
import { AttemptCgroup, removeCgroupDirs, type CgroupCounters } from './attempt-cgroup.ts';
import { diskFull, mountAttemptDisk, reserveUsed, type AttemptDisk } from './attempt-disk.ts';
import { GIT_CORE_GIT, HOST_GIT, prepareBaseSystem, type BaseSystem, type MountOp, type SandboxUser } from './base-system.ts';
import { startEgressProxy, type EgressProxy } from './egress-proxy.ts';
import { DEFAULT_INTERPRETERS, detectInterpreterExposure, type Exposure } from './expose-interpreters.ts';
import { LAUNCH_FAILURE_PREFIX, sandboxCommand, type CommandPlan } from './sandbox-command.ts';
import { stageSources, type StagedSources } from './stage-sources.ts';
import { copyLayers, mountOverlay, prepareLayers, unmount, type WorkspaceLayers } from './workspace-layers.ts';
import { parseGitLog } from './git-observations.ts';
import type {
  ExecResult,
  HarnessMode,
  HistoryReaudit,
  SandboxEnvironment,
  SandboxObservation,
  SandboxProvider,
  SandboxSession,
  SandboxSpec,
} from './sandbox.ts';

/** The sandbox could not be set up: an infrastructure error, never the model's failure. */
export class SandboxSetupError extends FlywheelError {
  readonly audit?: HistoryAudit;
  constructor(message: string, audit?: HistoryAudit, options?: ErrorOptions) {
    super('SandboxSetupError', message, options);
    this.audit = audit;
  }
}

/** A command could not be started inside the sandbox (its cgroup or bubblewrap refused): an infrastructure error. */
export const SANDBOX_EXEC_ERROR = 'SandboxExecError';

export interface NamespaceSandboxOptions {
  /** Holds the base system, the layer cache and every attempt's directory. Default `$TMPDIR/flywheel-sandbox`. */
  root?: string;
  /**
   * More host paths an agent has no business naming (private suites, credentials): a command that names one is
   * recorded as `read.outside-workspace`. Nothing outside the allow-list is visible inside anyway.
   */
  hide?: string[];
  /** `overlay` (fails if unavailable), `copy`, or `auto` (overlay, else copy). Default `auto`. */
  workspace?: 'overlay' | 'copy' | 'auto';
  /**
   * Host directories bound read-only inside every sandbox at the same path (a toolchain in /opt). Their `bin`
   * subdirectory, when there is one, goes on PATH after the environment's.
   */
  exposePaths?: string[];
  /**
   * Host interpreters added to every environment (see `expose-interpreters.ts`): their prefix bound read-only, their
   * own package folders masked. `true` (default) for python3, python and node as the host's PATH resolves them;
   * `false` for none; or a list of command names. An environment that binds the same prefix wins.
   */
  exposeInterpreters?: boolean | string[];
  /** Also run `git fsck --connectivity-only --unreachable` in the strict audit (about 20 ms on 10,000 files). Default true. */
  fsckAudit?: boolean;
  /** Builds the environment of a spec that has none. Default `new CachedEnvironmentResolver()`. */
  environments?: EnvironmentResolver;
  /** The unprivileged uid (and gid) commands run as, inside and outside the sandbox. Default 61000. */
  uid?: number;
  gid?: number;
}

/** Defaults of the attempt-wide limits (`SandboxLimits` fields left out). */
export const DEFAULT_LIMITS = { memoryBytes: 4 * 1024 ** 3, processes: 512, diskBytes: 2 * 1024 ** 3, cpus: 2 } as const;

const FORWARDER = fileURLToPath(new URL('./egress-forwarder.ts', import.meta.url));
const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const NO_SPACE = /No space left on device|ENOSPC|Disk quota exceeded/;
/** How often a running command's process counter is read (a fork bomb is killed at the next read). */
const PIDS_POLL_MS = 200;

function signalName(n: number): string | null {
  for (const [name, value] of Object.entries(osConstants.signals)) if (value === n) return name;
  return null;
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

/**
 * @example
 * const provider = new NamespaceSandboxProvider({ exposePaths: ['/opt/toolchain'] });
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 * const r = await session.exec('git log --oneline');
 * await session.close();
 */
export class NamespaceSandboxProvider implements SandboxProvider {
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
    this.environments = options.environments ?? new CachedEnvironmentResolver();
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
    const id = randomUUID();
    const attemptDir = join(this.attemptsDir, id);
    await mkdir(attemptDir, { recursive: true });
    await writeFile(join(attemptDir, 'owner'), `${process.pid}\n`);
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
    const removed: string[] = [];
    const entries = await readdir(this.attemptsDir).catch(() => [] as string[]);
    for (const id of entries) {
      const dir = join(this.attemptsDir, id);
      const owner = Number((await readFile(join(dir, 'owner'), 'utf8').catch(() => '')).trim());
      let alive = false;
      try {
        if (owner > 0) process.kill(owner, 0);
        alive = owner > 0;
      } catch (error) {
        alive = (error as NodeJS.ErrnoException).code === 'EPERM';
      }
      if (alive) continue;
      const cgroups = (await readFile(join(dir, 'cgroups'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      await removeCgroupDirs(cgroups);
      await unmountAll([join(dir, 'ws'), join(dir, 'disk')]);
      await rm(dir, { recursive: true, force: true });
      removed.push(id);
    }
    return removed;
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

const execFileAsync = promisify(execFile);

async function bindMount(source: string, target: string): Promise<void> {
  await execFileAsync('mount', ['--bind', source, target]);
}

/** Unmounts those of `paths` that are mount points (the workspace before the disk under it), in one `umount`. */
async function unmountAll(paths: string[]): Promise<void> {
  const mounts = await readFile('/proc/self/mountinfo', 'utf8');
  const mounted = paths.filter((m) => mounts.includes(` ${m} `));
  if (mounted.length === 0) return;
  await execFileAsync('umount', mounted).catch(async () => {
    for (const m of mounted) await unmount(m);
  });
}

export class NamespaceSandboxSession implements SandboxSession {
  readonly workdir: string;
  readonly mode: HarnessMode;
  private readonly provider: NamespaceSandboxProvider;
  private readonly spec: SandboxSpec;
  private readonly attemptDir: string;
  private layers: WorkspaceLayers | undefined;
  private strategy: 'overlay' | 'copy' | undefined;
  private disk: AttemptDisk | undefined;
  private cgroup: AttemptCgroup | undefined;
  private plan: CommandPlan | undefined;
  private base: BaseSystem | undefined;
  private staged: StagedSources | undefined;
  /** The sandbox's PATH (the environment's folders first). */
  private pathDirs: string[] = [];
  /** The attempt's /tmp folder with links resolved (where the git log must really be). */
  private tmpReal: string | undefined;
  /** Read-only binds of the environment and the provider (host source at target), for the observations. */
  private shownPaths: string[] = [];
  private environmentUsed: SandboxEnvironment | undefined;
  private proxy: EgressProxy | undefined;
  private forwarder: ChildProcess | undefined;
  private forwarderPort = 0;
  private readonly observed: SandboxObservation[] = [];
  private readonly running = new Set<ChildProcess>();
  private closing: Promise<void> | undefined;
  /** Set-up steps started in parallel: teardown waits for them, so nothing they make outlives a failed start. */
  private readonly pending: Array<Promise<unknown>> = [];
  private exposed: Exposure = { paths: [], masks: [], binDirs: [] };
  /** Milliseconds spent in each set-up and teardown step (what `bench:harness` reports). */
  readonly timings: {
    layersMs: number;
    workspaceMs: number;
    auditMs: number;
    networkMs: number;
    /** The cgroup, the capped disk and the base system (in parallel with the layers). */
    isolationMs: number;
    /** Resolving the task environment (in parallel with the workspace and the audit). */
    environmentMs: number;
    /** Checking the environment, finding every git, staging unreachable bind sources. */
    planMs: number;
    /** The first command (`exit 0`), which proves the sandbox starts. */
    probeMs: number;
    closeMs: number;
  } = { layersMs: 0, workspaceMs: 0, auditMs: 0, networkMs: 0, isolationMs: 0, environmentMs: 0, planMs: 0, probeMs: 0, closeMs: 0 };

  constructor(provider: NamespaceSandboxProvider, spec: SandboxSpec, attemptDir: string) {
    this.provider = provider;
    this.spec = spec;
    this.mode = spec.mode;
    this.attemptDir = attemptDir;
    this.workdir = join(attemptDir, 'ws');
  }

  /** What this attempt's workspace was built with (for the trajectory and the benchmark). */
  /** The environment this attempt's commands run against, for the attempt record (manifests when the resolver built it). */
  get taskEnvironment(): { id: string; manifests?: unknown[] } | undefined {
    const used = this.environmentUsed as (SandboxEnvironment & { manifests?: unknown[] }) | undefined;
    if (!used) return undefined;
    return Array.isArray(used.manifests) ? { id: used.id, manifests: used.manifests } : { id: used.id };
  }

  get info(): { strategy: 'overlay' | 'copy' | undefined; tree: string | undefined; forwarderPort: number; environment: string | undefined } {
    return { strategy: this.strategy, tree: this.layers?.tree, forwarderPort: this.forwarderPort, environment: this.environmentUsed?.id };
  }

  /** The attempt's limits with the defaults filled in. */
  get limits(): Required<Pick<SandboxSpec['limits'], 'memoryBytes' | 'processes' | 'diskBytes' | 'cpus'>> {
    const l = this.spec.limits;
    return {
      memoryBytes: l.memoryBytes ?? DEFAULT_LIMITS.memoryBytes,
      processes: l.processes ?? DEFAULT_LIMITS.processes,
      diskBytes: l.diskBytes ?? DEFAULT_LIMITS.diskBytes,
      cpus: l.cpus ?? DEFAULT_LIMITS.cpus,
    };
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    const background = <T>(p: Promise<T>, makesResources = true): Promise<T> => {
      // Awaited below; until then a failure must not surface as an unhandled rejection.
      p.catch(() => undefined);
      if (makesResources) this.pending.push(p);
      return p;
    };
    const network = background((this.mode === 'strict' ? this.startNetwork() : Promise.resolve()).then(() => {
      this.timings.networkMs = Date.now() - t0;
    }));
    const exposure = background(this.provider.exposure().then((e) => {
      this.exposed = e;
    }));
    const isolation = background(this.startIsolation().then(() => {
      this.timings.isolationMs = Date.now() - t0;
    }));
    const layers = await prepareLayers({
      cacheDir: join(this.provider.root, 'cache'),
      sourceDir: this.spec.sourceDir,
      baseCommit: this.spec.baseCommit,
      mode: this.mode,
      scratchDir: this.attemptDir,
      owner: this.provider.user,
    });
    this.layers = layers;
    const t1 = Date.now();
    this.timings.layersMs = t1 - t0;
    const environment = background(this.resolveEnvironment(layers), false);
    await Promise.all([exposure, isolation]);
    this.strategy = await this.provider.materialize(layers.lowers, this.disk!, this.workdir, this.limits.diskBytes);
    const t2 = Date.now();
    this.timings.workspaceMs = t2 - t1;
    // The audit, and (in parallel) the command plan and a first command that proves the sandbox starts; both
    // before the network is waited for, which is the slowest step in strict mode.
    const audited = background((async () => {
      if (layers.strict) {
        const audit = await auditHistory({
          gitDir: join(this.workdir, '.git'),
          tree: layers.tree,
          rootCommit: layers.strict.rootCommit,
          allowedObjects: layers.strict.allowedObjects,
          fsck: this.provider.options.fsckAudit ?? true,
        });
        if (!audit.ok) throw new SandboxSetupError(`history audit failed: ${audit.problems.join('; ')}`, audit);
      }
      this.timings.auditMs = Date.now() - t2;
    })(), false);
    const planned = background(
      (async () => {
        this.environmentUsed = await environment;
        const t3 = Date.now();
        this.plan = await this.buildPlan(this.environmentUsed);
        this.timings.planMs = Date.now() - t3;
        // Every bind exists and bubblewrap works (run before the network namespace is joined: it only exits).
        const probe = await this.run('exit 0', {}, false);
        this.timings.probeMs = probe.durationMs;
        if (probe.exitCode !== 0) throw new SandboxSetupError(`sandbox command failed to start: ${(probe.stderr || probe.stdout).trim().slice(0, 500)}`);
      })(),
    );
    await Promise.all([audited, planned]);
    await network;
    // Now the forwarder's port and namespace are known: the proxy variables and the namespace to join.
    this.plan = {
      ...this.plan!,
      env: this.environment(this.pathDirs, this.environmentUsed!),
      ...(this.mode === 'strict' && this.forwarder?.pid ? { netns: `/proc/${this.forwarder.pid}/ns/net` } : {}),
    };
  }

  /** The attempt's cgroup and capped disk, and the provider's base system. */
  private async startIsolation(): Promise<void> {
    const limits = this.limits;
    const name = this.attemptDir.split('/').at(-1)!;
    const [, disk] = await Promise.all([
      AttemptCgroup.create(name, { memoryBytes: limits.memoryBytes, processes: limits.processes, cpus: limits.cpus }).then(async (g) => {
        this.cgroup = g;
        await writeFile(join(this.attemptDir, 'cgroups'), `${g.dirs.join('\n')}\n`);
        return g;
      }),
      mountAttemptDisk(join(this.attemptDir, 'disk'), limits.diskBytes, this.provider.user).then((d) => {
        this.disk = d;
        return d;
      }),
      this.provider.baseSystem(),
    ]);
    const { uid, gid } = this.provider.user;
    await mkdir(join(disk.tmp, '.flywheel'));
    await mkdir(join(disk.tmp, 'home'));
    await writeFile(join(disk.tmp, '.flywheel', 'git.log'), '');
    for (const p of [join(disk.tmp, '.flywheel'), join(disk.tmp, 'home'), join(disk.tmp, '.flywheel', 'git.log')]) await chown(p, uid, gid);
  }

  private async resolveEnvironment(layers: WorkspaceLayers): Promise<SandboxEnvironment> {
    const t = Date.now();
    const env = this.spec.environment ?? (await this.provider.environments.resolve({ treeDir: layers.treeDir }));
    this.timings.environmentMs = Date.now() - t;
    return env;
  }

  /** Checks the environment against what must stay out of reach and lays out every command's file system. */
  private async buildPlan(environment: SandboxEnvironment): Promise<CommandPlan> {
    const base = await this.provider.baseSystem();
    this.base = base;
    const root = this.provider.root;
    const source = this.layers!.sourceDir;
    const normalized = (what: string, path: string) => {
      if (!isAbsolute(path) || normalize(path) !== path.replace(/\/+$/, '') || path === '/') throw new SandboxSetupError(`${what}: ${path} is not a normalized absolute path`);
    };
    const reachable = async (what: string, path: string): Promise<string> => {
      const real = await realpath(path).catch(() => {
        throw new SandboxSetupError(`${what} ${path} does not exist`);
      });
      if (within(root, real) || within(real, root)) throw new SandboxSetupError(`${what} ${path} would expose the sandbox root (layer cache, other attempts)`);
      if (within(source, real) || within(real, source)) throw new SandboxSetupError(`${what} ${path} would show the task's source repository ${source} (and its history) inside the sandbox`);
      return real;
    };
    const binds: Array<{ source: string; target: string }> = [];
    for (const b of environment.binds) {
      normalized('environment bind target', b.target);
      binds.push({ source: await reachable('environment bind', b.source), target: b.target });
    }
    for (const p of this.exposed.paths) if (!binds.some((b) => b.target === p)) binds.push({ source: await reachable('exposed path', p), target: p });
    this.shownPaths = binds.map((b) => b.target);
    const masks = [...new Set([...(environment.masks ?? []), ...this.exposed.masks])];
    for (const m of masks) normalized('mask', m);
    const workspaceBinds: Array<{ source: string; path: string }> = [];
    for (const b of environment.workspaceBinds ?? []) {
      const rel = normalize(b.path);
      if (isAbsolute(rel) || rel.startsWith('..') || rel === '.' || rel === '.git' || rel.startsWith('.git/')) {
        throw new SandboxSetupError(`workspace bind path ${b.path} must be a relative path inside the workspace, outside .git`);
      }
      workspaceBinds.push({ source: await reachable('workspace bind', b.source), path: rel });
    }
    const outputBinds: Array<{ source: string; target: string }> = [];
    for (const b of this.spec.outputBinds ?? []) {
      normalized('output bind target', b.target);
      const real = await reachable('output bind', b.source);
      // Written by the sandbox user.
      await execFileAsync('chown', ['-R', '-h', `${this.provider.user.uid}:${this.provider.user.gid}`, real]);
      outputBinds.push({ source: real, target: b.target });
    }
    const pathDirs = [...new Set([...environment.pathDirs, ...this.exposed.binDirs, ...SYSTEM_PATH])];
    this.pathDirs = pathDirs;

    // The order matters: /tmp before what may lie under it (the workspace, a toolchain in a checkout under /tmp),
    // masks after the binds they cover, the git shim last.
    const mounts: MountOp[] = [...base.mounts, { op: 'bind', source: this.disk!.tmp, target: '/tmp' }];
    for (const b of binds) mounts.push({ op: 'ro-bind', source: b.source, target: b.target });
    for (const m of masks) mounts.push({ op: 'ro-bind', source: base.emptyDir, target: m });
    mounts.push({ op: 'bind', source: this.workdir, target: this.workdir });
    for (const b of workspaceBinds) mounts.push({ op: 'ro-bind', source: b.source, target: join(this.workdir, b.path), agentOnly: true });
    for (const b of outputBinds) mounts.push({ op: 'bind', source: b.source, target: b.target });
    mounts.push({ op: 'ro-bind', source: HOST_GIT, target: base.realGitInside });
    for (const target of await gitTargets(pathDirs, binds)) mounts.push({ op: 'ro-bind', source: base.gitShim, target });

    this.staged = await stageSources(
      mounts.flatMap((m) => (m.op === 'bind' || m.op === 'ro-bind' ? [m.source] : [])),
      this.provider.user,
    );
    const staged = this.staged;
    return {
      user: this.provider.user,
      seccompFile: base.seccompFile,
      mounts: mounts.map((m) => (m.op === 'bind' || m.op === 'ro-bind' ? { ...m, source: staged.path(m.source) } : m)),
      // Completed once the network is up (the proxy's port); the namespace to join is added then too.
      env: this.environment(pathDirs, environment),
      ...(staged.mountNamespace ? { mountns: staged.mountNamespace } : {}),
      cgroupProcs: this.cgroup!.procsFiles,
      ...(this.spec.limits.cpuSeconds ? { cpuSeconds: this.spec.limits.cpuSeconds } : {}),
    };
  }

  private async startNetwork(): Promise<void> {
    const socketPath = join(this.attemptDir, 'egress.sock');
    this.proxy = await startEgressProxy({
      socketPath,
      allowList: this.spec.networkAllowList,
      onObservation: (o) => this.observed.push(o),
    });
    // "AnyIP": every address is local to the namespace, so DNS to any nameserver and raw connects to the common ports
    // reach the forwarder, which refuses and logs them (see egress-forwarder.ts); IPv6 when the kernel has it. Without
    // the route (no such support) isolation is the same, only those attempts go unlogged.
    const child = spawn(
      'unshare',
      ['--net', '--', 'sh', '-c', 'ip link set lo up && { ip route add local 0.0.0.0/0 dev lo || true; } && { ip -6 route add local ::/0 dev lo 2>/dev/null || true; } && exec "$0" "$@"', process.execPath, '--no-warnings', FORWARDER, socketPath],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.forwarder = child;
    this.forwarderPort = await new Promise<number>((resolvePort, reject) => {
      let text = '';
      let err = '';
      let port = 0;
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        let nl: number;
        while ((nl = text.indexOf('\n')) >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          if (port === 0 && /^\d+$/.test(line)) {
            port = Number(line);
            resolvePort(port);
            continue;
          }
          // DNS queries and raw connects the forwarder refused: logged like the proxy's blocked requests.
          try {
            const { obs } = JSON.parse(line) as { obs?: Record<string, unknown> };
            if (obs) this.observed.push({ kind: 'network.blocked', at: new Date().toISOString(), detail: obs });
          } catch {
            /* not an observation line */
          }
        }
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`egress forwarder exited (${code}): ${err.trim()}`)));
      child.on('error', reject);
    });
  }

  /** Every variable a command sees: nothing of the harness's own environment. */
  private environment(pathDirs: string[], environment: SandboxEnvironment): Record<string, string> {
    const user = this.provider.user.name;
    const env: Record<string, string> = {
      PATH: pathDirs.join(':'),
      HOME: '/tmp/home',
      USER: user,
      LOGNAME: user,
      SHELL: '/bin/bash',
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_PAGER: 'cat',
      PAGER: 'cat',
    };
    if (this.mode === 'strict') {
      const proxy = `http://127.0.0.1:${this.forwarderPort}`;
      // Loopback names stay direct unless the allow-list names one (then it must go through the proxy).
      const allowed = this.spec.networkAllowList.join(' ').toLowerCase();
      const noProxy = ['localhost', '127.0.0.1', '::1'].filter((h) => !allowed.includes(h)).join(',');
      for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
        env[k] = proxy;
        env[k.toLowerCase()] = proxy;
      }
      env.NO_PROXY = noProxy;
      env.no_proxy = noProxy;
      env.NODE_USE_ENV_PROXY = '1';
    }
    return { ...env, ...(environment.env ?? {}), ...(this.spec.env ?? {}) };
  }

  /** Host paths an agent has no business naming (all absent inside; naming one is recorded). */
  private hiddenPaths(): string[] {
    const hide = [this.provider.root, '/root', ...(this.provider.options.hide ?? [])];
    if (this.layers) hide.push(this.layers.sourceDir);
    return hide;
  }

  exec(command: string, options: { cwd?: string; timeoutMs?: number; stdin?: string } = {}): Promise<ExecResult> {
    return this.run(command, options, false);
  }

  private async run(
    command: string,
    options: { cwd?: string; timeoutMs?: number; stdin?: string },
    internal: boolean,
  ): Promise<ExecResult> {
    if (this.closing) throw new FlywheelError('SandboxClosed', 'the sandbox is closed');
    const plan = this.plan;
    const cgroup = this.cgroup;
    const disk = this.disk;
    if (!plan || !cgroup || !disk) throw new FlywheelError('SandboxClosed', 'the sandbox is not started');
    const cwd = resolve(this.workdir, options.cwd ?? '.');
    const rel = relative(this.workdir, cwd);
    if (rel.startsWith('..') || isAbsolute(rel)) throw new FlywheelError('ValidationError', `cwd ${cwd} is outside the workspace`);
    if (!internal) this.noteOutsideReads(command);
    const limits = this.spec.limits;
    const outputCap = internal ? 512 * 1024 * 1024 : limits.outputBytes;
    const timeoutMs = options.timeoutMs ?? limits.commandTimeoutMs;
    const [before, fullBefore] = await Promise.all([cgroup.counters(), diskFull(disk)]);

    const { file, args } = sandboxCommand(plan, { command, cwd, internal });
    const started = Date.now();
    const child = spawn(file, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
    this.running.add(child);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let truncated = false;
    let limit: ExecResult['limit'];
    const stop = (why: NonNullable<ExecResult['limit']>) => {
      if (!limit) limit = why;
      child.kill('SIGKILL');
    };
    const killAt = outputCap * 4 + 1024 * 1024;
    const take = (sink: Buffer[]) => (d: Buffer) => {
      seen += d.length;
      if (kept < outputCap) {
        const room = outputCap - kept;
        sink.push(room >= d.length ? d : d.subarray(0, room));
        kept += Math.min(room, d.length);
      }
      if (seen > outputCap) truncated = true;
      if (seen > killAt && !limit) stop('output');
    };
    child.stdout.on('data', take(out));
    child.stderr.on('data', take(err));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
    const timer = setTimeout(() => stop('time'), timeoutMs);
    // A command at the attempt's process limit (a fork bomb) is stopped rather than left spinning until the clock.
    const pidsWatch = setInterval(() => {
      void cgroup.counters().then((now) => {
        if (now.pidsMax > before.pidsMax && !limit) stop('processes');
      });
    }, PIDS_POLL_MS);
    const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.on('close', (c, s) => done({ code: c, signal: s }));
      child.on('error', () => done({ code: null, signal: null }));
    });
    clearTimeout(timer);
    clearInterval(pidsWatch);
    this.running.delete(child);
    const durationMs = Date.now() - started;
    const stdout = Buffer.concat(out).toString('utf8');
    const stderr = Buffer.concat(err).toString('utf8');
    if (code === 125 && stderr.includes(LAUNCH_FAILURE_PREFIX)) {
      throw new FlywheelError(SANDBOX_EXEC_ERROR, `the sandbox could not start the command: ${stderr.trim().slice(0, 300)}`);
    }

    // bubblewrap reports a command killed by a signal as 128 + n.
    let exitCode = code;
    let sig: string | null = signal;
    if (code !== null && code > 128 && code <= 128 + 64) {
      sig = signalName(code - 128);
      if (sig) exitCode = null;
    }
    if (!limit || limit === 'time') {
      const after: CgroupCounters = await cgroup.counters();
      if (after.pidsMax > before.pidsMax) limit = 'processes';
      else if (after.oomKills > before.oomKills) limit = 'memory';
    }
    if (!limit && limits.cpuSeconds && (sig === 'SIGXCPU' || (sig === 'SIGKILL' && durationMs >= limits.cpuSeconds * 900))) limit = 'cpu';
    // The disk cap: the attempt's disk is full now and this command filled it or was refused a write (ENOSPC).
    if (!limit && (await diskFull(disk)) && (!fullBefore || NO_SPACE.test(stderr) || NO_SPACE.test(stdout))) limit = 'disk';
    if (!internal) await this.harvestGitLog();
    return { exitCode, signal: sig, stdout, stderr, truncated, limit, durationMs };
  }

  /** Cheap detection of reads outside the workspace: the command names a hidden path. */
  private noteOutsideReads(command: string): void {
    // The workspace itself lies under the sandbox root: its own path is not a read outside.
    let text = command.replaceAll(this.workdir, '<workspace>');
    // Bound toolchains (a python under /root) are readable by design.
    for (const p of this.shownPaths) text = text.replaceAll(p, '<exposed>');
    for (const path of this.hiddenPaths()) {
      if (path !== '/' && text.includes(path)) {
        this.observed.push({ kind: 'read.outside-workspace', at: new Date().toISOString(), detail: { path, command } });
      }
    }
  }

  /**
   * Reads and empties the git shim's log. The file is the agent's (it can replace it with a link to a host file), so
   * it is opened without following links and must be a regular file inside the attempt's /tmp.
   */
  private async harvestGitLog(): Promise<void> {
    const tmp = this.disk?.tmp;
    if (!tmp) return;
    const file = join(tmp, '.flywheel', 'git.log');
    const real = await realpath(file).catch(() => undefined);
    this.tmpReal ??= await realpath(tmp);
    if (real !== join(this.tmpReal, '.flywheel', 'git.log')) return;
    const handle = await open(file, fsConstants.O_RDWR | fsConstants.O_NOFOLLOW).catch(() => undefined);
    if (!handle) return;
    try {
      if (!(await handle.stat()).isFile()) return;
      const text = await handle.readFile('utf8');
      if (!text) return;
      await handle.truncate(0);
      this.observed.push(...parseGitLog(text, this.mode));
    } finally {
      await handle.close();
    }
  }

  async diff(): Promise<string> {
    const tree = this.layers?.tree;
    if (!tree || !this.base) throw new FlywheelError('SandboxClosed', 'the sandbox has no workspace');
    const realGit = this.base.realGitInside;
    // Inside the sandbox: the agent controls .git/config (filters, fsmonitor), so the harness never runs git on it.
    // The environment's workspace binds are not mounted for this command, so they are not part of the diff.
    const script = [
      'export GIT_INDEX_FILE=/tmp/.flywheel/diff-index GIT_CONFIG_GLOBAL=/dev/null',
      'mkdir -p /tmp/.flywheel && rm -f "$GIT_INDEX_FILE"',
      `${realGit} read-tree ${tree} && ${realGit} add -A && ${realGit} -c core.quotepath=false diff --cached --binary --full-index ${tree}`,
      'code=$?; rm -f "$GIT_INDEX_FILE"; exit $code',
    ].join('\n');
    const r = await this.run(script, { timeoutMs: Math.max(this.spec.limits.commandTimeoutMs, 120_000) }, true);
    if (r.exitCode !== 0) throw new FlywheelError('SandboxDiffError', `git diff failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  observations(): SandboxObservation[] {
    return [...this.observed];
  }

  /**
   * The fast path of the re-audit on an overlay workspace: every object the agent can have added is in a file of the
   * overlay's upper layer (the lower layers were audited before the attempt), so only the loose objects and pack
   * indexes written there are read — on the host, from files, without running git on the agent's repository.
   * Undefined when the upper layer changes how the repository finds objects (`.git` replaced, a symlink, an
   * alternates or `commondir` file): then the full listing inside the sandbox decides.
   */
  private async objectsWrittenToUpper(): Promise<Set<string> | undefined> {
    if (!this.disk) return undefined;
    const upperGit = join(this.disk.upper, '.git');
    const st = await lstat(upperGit).catch(() => undefined);
    if (!st) return new Set();
    if (!st.isDirectory()) return undefined;
    const ids = new Set<string>();
    for (const entry of await readdir(upperGit, { recursive: true, withFileTypes: true })) {
      if (entry.isSymbolicLink()) return undefined;
      const rel = relative(upperGit, join(entry.parentPath, entry.name));
      if (/^(objects\/info\/(http-)?alternates|commondir)$/.test(rel)) return undefined;
      if (!entry.isFile()) continue;
      const loose = /^objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/.exec(rel);
      if (loose) ids.add(`${loose[1]}${loose[2]}`);
      else if (/^objects\/pack\/[^/]+\.idx$/.test(rel)) {
        const index = await git(['show-index'], { input: await readFile(join(upperGit, rel)), allowFailure: true });
        if (index.code !== 0) return undefined;
        for (const line of index.stdout.split('\n')) {
          const id = line.split(' ')[1];
          if (id) ids.add(id);
        }
      }
    }
    return ids;
  }

  /**
   * Strict mode, after the agent: lists every object the workspace repository can read (inside the sandbox, since the
   * agent controls its config), keeps those outside the base tree, and asks the trusted source repository which of
   * them its history holds. A commit or tag of that history means history came back; see `HistoryReaudit`.
   */
  async reaudit(): Promise<HistoryReaudit | undefined> {
    const strict = this.layers?.strict;
    if (this.mode !== 'strict' || !strict || !this.layers || !this.base) return undefined;
    const started = Date.now();
    const problems: string[] = [];
    const fresh = new Set<string>();
    const fromUpper = this.strategy === 'overlay' ? await this.objectsWrittenToUpper() : undefined;
    if (fromUpper) {
      for (const id of fromUpper) if (id !== strict.rootCommit && !strict.allowedObjects.has(id)) fresh.add(id);
    } else {
      const script = [
        'export GIT_CONFIG_GLOBAL=/dev/null',
        `${this.base.realGitInside} cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' || exit 3`,
        'for f in objects/info/alternates objects/info/http-alternates; do [ -e ".git/$f" ] && echo "ALT $f"; done; exit 0',
      ].join('\n');
      const r = await this.run(script, { timeoutMs: Math.max(this.spec.limits.commandTimeoutMs, 120_000) }, true);
      if (r.exitCode !== 0) {
        problems.push(`cannot list the workspace repository's objects: ${(r.stderr.trim() || `exit ${r.exitCode ?? r.signal}`).slice(0, 300)}`);
      }
      for (const line of r.stdout.split('\n')) {
        if (line.startsWith('ALT ')) {
          problems.push(`${line.slice(4)} present: the repository reads objects from elsewhere`);
          continue;
        }
        const [id, type] = line.split(' ');
        if (!id || !type || id === strict.rootCommit || strict.allowedObjects.has(id)) continue;
        fresh.add(id);
      }
    }
    const recoveredHistory: string[] = [];
    let matchingLaterContent = 0;
    const sourceGit = join(this.layers.sourceDir, '.git');
    if (fresh.size > 0 && (await stat(sourceGit).then(() => true, () => false))) {
      const known = await git(['--git-dir', sourceGit, 'cat-file', '--batch-check=%(objectname) %(objecttype)'], {
        input: `${[...fresh].join('\n')}\n`,
        allowFailure: true,
      });
      for (const line of known.stdout.split('\n')) {
        const [id, type] = line.split(' ');
        if (!id || !type || type === 'missing') continue;
        if (type === 'commit' || type === 'tag') recoveredHistory.push(id);
        else matchingLaterContent++;
      }
    }
    if (recoveredHistory.length > 0) problems.push(`${recoveredHistory.length} commit/tag object(s) of the task's history readable after the attempt`);
    return {
      ok: problems.length === 0,
      newObjects: fresh.size,
      recoveredHistory,
      matchingLaterContent,
      problems,
      method: fromUpper ? 'upper-layer' : 'full-listing',
      durationMs: Date.now() - started,
    };
  }

  close(): Promise<void> {
    this.closing ??= this.teardown();
    return this.closing;
  }

  private async teardown(): Promise<void> {
    const started = Date.now();
    await Promise.allSettled(this.pending);
    for (const child of this.running) child.kill('SIGKILL');
    if (this.forwarder && this.forwarder.exitCode === null && this.forwarder.signalCode === null) {
      const f = this.forwarder;
      await new Promise<void>((done) => {
        f.once('exit', () => done());
        f.kill('SIGKILL');
      });
    }
    await this.proxy?.close();
    this.staged?.release();
    // Whatever still runs in the attempt's cgroup dies with it (before the disk it may be writing to goes).
    const cgroups = this.cgroup?.dirs ?? (await readFile(join(this.attemptDir, 'cgroups'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    await removeCgroupDirs(cgroups);
    await unmountAll([this.workdir, join(this.attemptDir, 'disk')]);
    await rm(this.attemptDir, { recursive: true, force: true });
    this.timings.closeMs = Date.now() - started;
  }
}

/**
 * Where a command could find a git: `git` in each PATH folder (through the binds that show it) and git-core's own.
 * Each is covered by the shim, so every git a command runs is logged.
 */
async function gitTargets(pathDirs: string[], binds: Array<{ source: string; target: string }>): Promise<string[]> {
  const targets: string[] = [];
  const seen = new Set<string>();
  for (const dir of pathDirs) {
    const inside = join(dir, 'git');
    const bind = binds.filter((b) => within(inside, b.target)).sort((a, b) => b.target.length - a.target.length)[0];
    let host: string;
    if (bind) host = join(bind.source, relative(bind.target, inside));
    else if (['/usr', '/bin', '/sbin', '/lib', '/lib64'].some((r) => within(inside, r))) host = inside;
    else continue;
    const st = await stat(host).catch(() => undefined);
    if (!st?.isFile()) continue;
    // /bin/git and /usr/bin/git are one file when /bin links to usr/bin: one bind covers both.
    const key = bind ? `${bind.target}:${inside}` : await realpath(host).catch(() => host);
    if (seen.has(key)) continue;
    seen.add(key);
    targets.push(bind ? inside : key);
  }
  if ((await stat(GIT_CORE_GIT).then((s) => s.isFile(), () => false)) && !targets.includes(GIT_CORE_GIT)) targets.push(GIT_CORE_GIT);
  return targets;
}
