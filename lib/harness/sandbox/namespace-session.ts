/**
 * One attempt in the namespace sandbox, from `start` to `close`: sets up the attempt's isolation (cgroup, capped disk,
 * workspace, strict audit, task environment, command plan, strict network) as much in parallel as the steps allow,
 * times each step, and tears it all down again, also after a start that failed half way. The work itself lives
 * beside it: running a command (`run-command.ts`), the plan (`command-plan.ts`), the network (`strict-network.ts`),
 * the diff (`workspace-diff.ts`), the re-audit (`history-reaudit.ts`), the git shim's log (`harvest-git-log.ts`).
 *
 * @example
 * const session = await provider.open({ sourceDir: repo, mode: 'strict', networkAllowList: [], limits });
 * await session.exec('pytest -q');
 * const patch = await session.diff();
 * session.timings; // { layersMs, workspaceMs, auditMs, networkMs, … }
 * await session.close();
 */
import { type ChildProcess } from 'node:child_process';
import { chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { auditHistory } from '../git/audit-history.ts';
import { attemptPaths, recordCgroups, removeAttempt } from './attempt-dir.ts';
import { AttemptCgroup } from './attempt-cgroup.ts';
import { attemptLimits } from './attempt-limits.ts';
import { mountAttemptDisk, type AttemptDisk } from './attempt-disk.ts';
import type { BaseSystem } from './base-system.ts';
import { commandVariables } from './command-env.ts';
import { buildCommandPlan } from './command-plan.ts';
import type { Exposure } from './expose-interpreters.ts';
import { GitShimLog } from './harvest-git-log.ts';
import { reauditHistory } from './history-reaudit.ts';
import type { SandboxHost, SessionTimings } from './namespace-types.ts';
import { hiddenPaths, outsideReads } from './outside-reads.ts';
import { commandCwd, runCommand } from './run-command.ts';
import type {
  ExecResult,
  HistoryReaudit,
  SandboxEnvironment,
  SandboxObservation,
  SandboxSession,
  SandboxSpec,
} from './sandbox.ts';
import type { HarnessMode } from '../task/harness-mode.ts';
import type { CommandPlan } from './sandbox-command.ts';
import { SandboxClosedError, SandboxSetupError } from './sandbox-errors.ts';
import type { StagedSources } from './stage-sources.ts';
import { StrictNetwork } from './strict-network.ts';
import { ANY_HOST } from './allow-list.ts';
import { workspaceDiff } from './workspace-diff.ts';
import { prepareLayers, type WorkspaceLayers } from './workspace-layers.ts';

export class NamespaceSandboxSession implements SandboxSession {
  readonly workdir: string;
  readonly mode: HarnessMode;
  private readonly provider: SandboxHost;
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
  /** Read-only binds of the environment and the provider (host source at target), for the observations. */
  private shownPaths: string[] = [];
  private environmentUsed: SandboxEnvironment | undefined;
  private readonly network: StrictNetwork;
  private readonly gitLog: GitShimLog;
  private readonly observed: SandboxObservation[] = [];
  private readonly running = new Set<ChildProcess>();
  private closing: Promise<void> | undefined;
  /** Set-up steps started in parallel: teardown waits for them, so nothing they make outlives a failed start. */
  private readonly pending: Array<Promise<unknown>> = [];
  private exposed: Exposure = { paths: [], masks: [], binDirs: [] };
  /** Milliseconds spent in each set-up and teardown step (what `bench:harness` reports). */
  readonly timings: SessionTimings = { layersMs: 0, workspaceMs: 0, auditMs: 0, networkMs: 0, isolationMs: 0, environmentMs: 0, planMs: 0, probeMs: 0, closeMs: 0 };

  constructor(provider: SandboxHost, spec: SandboxSpec, attemptDir: string) {
    this.provider = provider;
    this.spec = spec;
    this.mode = spec.mode;
    this.attemptDir = attemptDir;
    this.workdir = attemptPaths(attemptDir).workdir;
    // Both modes get their own network namespace: lenient mode reaches any host through the proxy (`*`), but never
    // the host's own services, its unix or abstract sockets, or the metadata addresses the proxy refuses.
    this.network = new StrictNetwork({
      socketPath: attemptPaths(attemptDir).egressSocket,
      allowList: spec.mode === 'lenient' ? [ANY_HOST, ...spec.networkAllowList] : spec.networkAllowList,
      observe: (o) => this.observed.push(o),
    });
    this.gitLog = new GitShimLog(spec.mode, (found) => this.observed.push(...found));
  }

  /** The environment this attempt's commands run against, for the attempt record (manifests when the resolver built it). */
  get taskEnvironment(): { id: string; manifests?: unknown[] } | undefined {
    const used = this.environmentUsed as (SandboxEnvironment & { manifests?: unknown[] }) | undefined;
    if (!used) return undefined;
    return Array.isArray(used.manifests) ? { id: used.id, manifests: used.manifests } : { id: used.id };
  }

  /** What this attempt's workspace was built with (for the trajectory and the benchmark). */
  get info(): { strategy: 'overlay' | 'copy' | undefined; tree: string | undefined; forwarderPort: number; environment: string | undefined } {
    return { strategy: this.strategy, tree: this.layers?.tree, forwarderPort: this.network.port, environment: this.environmentUsed?.id };
  }

  /** The attempt's limits with the defaults filled in. */
  get limits(): Required<Pick<SandboxSpec['limits'], 'memoryBytes' | 'processes' | 'diskBytes' | 'cpus'>> {
    return attemptLimits(this.spec.limits);
  }

  async start(): Promise<void> {
    const t0 = Date.now();
    const background = <T>(p: Promise<T>, makesResources = true): Promise<T> => {
      // Awaited below; until then a failure must not surface as an unhandled rejection.
      p.catch(() => undefined);
      if (makesResources) this.pending.push(p);
      return p;
    };
    const network = background(this.network.start().then(() => {
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
      ...(this.network.netns ? { netns: this.network.netns } : {}),
    };
  }

  /** The attempt's cgroup and capped disk, and the provider's base system. */
  private async startIsolation(): Promise<void> {
    const limits = this.limits;
    const name = this.attemptDir.split('/').at(-1)!;
    const [, disk] = await Promise.all([
      AttemptCgroup.create(name, { memoryBytes: limits.memoryBytes, processes: limits.processes, cpus: limits.cpus }).then(async (g) => {
        this.cgroup = g;
        await recordCgroups(this.attemptDir, g.dirs);
        return g;
      }),
      mountAttemptDisk(attemptPaths(this.attemptDir).disk, limits.diskBytes, this.provider.user).then((d) => {
        this.disk = d;
        return d;
      }),
      this.provider.baseSystem(),
    ]);
    // The attempt's /tmp: the sandbox user's home and the git shim's log.
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
    const planned = await buildCommandPlan({
      base,
      root: this.provider.root,
      sourceDir: this.layers!.sourceDir,
      environment,
      exposed: this.exposed,
      outputBinds: this.spec.outputBinds,
      user: this.provider.user,
      tmpDir: this.disk!.tmp,
      workdir: this.workdir,
      cgroupProcs: this.cgroup!.procsFiles,
      cpuSeconds: this.spec.limits.cpuSeconds,
      variables: (pathDirs) => this.environment(pathDirs, environment),
    });
    this.shownPaths = planned.shownPaths;
    this.pathDirs = planned.pathDirs;
    this.staged = planned.staged;
    return planned.plan;
  }

  /** Every variable a command sees (see `command-env.ts`), with the forwarder's port as it is now. */
  private environment(pathDirs: string[], environment: SandboxEnvironment): Record<string, string> {
    return commandVariables({
      pathDirs,
      user: this.provider.user.name,
      mode: this.mode,
      forwarderPort: this.network.port,
      networkAllowList: this.spec.networkAllowList,
      environment,
      env: this.spec.env,
    });
  }

  exec(command: string, options: { cwd?: string; timeoutMs?: number; stdin?: string } = {}): Promise<ExecResult> {
    return this.run(command, options, false);
  }

  /** Runs a command; an agent's (not `internal`) is checked for outside reads and followed by the git log harvest. */
  private async run(
    command: string,
    options: { cwd?: string; timeoutMs?: number; stdin?: string },
    internal: boolean,
  ): Promise<ExecResult> {
    if (this.closing) throw new SandboxClosedError('the sandbox is closed');
    const plan = this.plan;
    const cgroup = this.cgroup;
    const disk = this.disk;
    if (!plan || !cgroup || !disk) throw new SandboxClosedError('the sandbox is not started');
    const cwd = commandCwd(this.workdir, options.cwd);
    if (!internal) {
      const hidden = hiddenPaths(this.provider.root, this.provider.options.hide, this.layers?.sourceDir);
      this.observed.push(...outsideReads({ command, workdir: this.workdir, shownPaths: this.shownPaths, hidden }));
    }
    const result = await runCommand(
      { plan, cgroup, disk, limits: this.spec.limits, running: this.running },
      { command, cwd, internal, timeoutMs: options.timeoutMs, stdin: options.stdin },
    );
    if (!internal) await this.gitLog.harvest(this.disk?.tmp);
    return result;
  }

  /** One of the harness's own commands (diff, re-audit): no outside-read check, no git log harvest. */
  private runInternal(script: string, timeoutMs: number): Promise<ExecResult> {
    return this.run(script, { timeoutMs }, true);
  }

  /** The harness's own commands get at least two minutes, whatever the agent's command limit. */
  private get internalTimeoutMs(): number {
    return Math.max(this.spec.limits.commandTimeoutMs, 120_000);
  }

  async diff(): Promise<string> {
    return workspaceDiff({
      tree: this.layers?.tree,
      realGitInside: this.base?.realGitInside,
      runInternal: (script, timeoutMs) => this.runInternal(script, timeoutMs),
      timeoutMs: this.internalTimeoutMs,
    });
  }

  observations(): SandboxObservation[] {
    return [...this.observed];
  }

  /** Strict mode, after the agent: see `history-reaudit.ts`. Lenient, or no workspace: undefined. */
  async reaudit(): Promise<HistoryReaudit | undefined> {
    const strict = this.layers?.strict;
    if (this.mode !== 'strict' || !strict || !this.layers || !this.base) return undefined;
    return reauditHistory({
      strict,
      sourceDir: this.layers.sourceDir,
      overlay: this.strategy === 'overlay',
      upper: this.disk?.upper,
      realGitInside: this.base.realGitInside,
      runInternal: (script, timeoutMs) => this.runInternal(script, timeoutMs),
      timeoutMs: this.internalTimeoutMs,
    });
  }

  close(): Promise<void> {
    this.closing ??= this.teardown();
    return this.closing;
  }

  private async teardown(): Promise<void> {
    const started = Date.now();
    await Promise.allSettled(this.pending);
    for (const child of this.running) child.kill('SIGKILL');
    await this.network.stop();
    this.staged?.release();
    // Whatever still runs in the attempt's cgroup dies with it (before the disk it may be writing to goes).
    await removeAttempt(this.attemptDir, this.cgroup?.dirs);
    this.timings.closeMs = Date.now() - started;
  }
}
