/**
 * The types the namespace provider and its sessions share, in a module of types only: the session needs its
 * provider's options, user and per-provider caches, and the provider makes sessions, so naming those here (not in
 * either file) keeps the two free of an import cycle.
 *
 * @example
 * const host: SandboxHost = new NamespaceSandboxProvider();   // what `NamespaceSandboxSession` is given
 * const base = await host.baseSystem();
 */
import type { EnvironmentResolver } from '../environment/environment-resolver.ts';
import type { AttemptDisk } from './attempt-disk.ts';
import type { BaseSystem, SandboxUser } from './base-system.ts';
import type { Exposure } from './expose-interpreters.ts';

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
  /** Builds the environment of a spec that has none. Default `cachedEnvironmentResolver()` (builds in a strict sandbox of this provider). */
  environments?: EnvironmentResolver;
  /** The unprivileged uid (and gid) commands run as, inside and outside the sandbox. Default 61000. */
  uid?: number;
  gid?: number;
}

/** What a session uses of the provider that opened it (`NamespaceSandboxProvider` is one). */
export interface SandboxHost {
  readonly root: string;
  readonly options: NamespaceSandboxOptions;
  readonly user: SandboxUser;
  readonly environments: EnvironmentResolver;
  exposure(): Promise<Exposure>;
  baseSystem(): Promise<BaseSystem>;
  materialize(lowers: string[], disk: AttemptDisk, workdir: string, diskBytes: number): Promise<'overlay' | 'copy'>;
}

/** Milliseconds spent in each set-up and teardown step (what `bench:harness` reports). */
export interface SessionTimings {
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
}
